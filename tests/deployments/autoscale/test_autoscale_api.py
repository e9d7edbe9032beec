"""The autoscale API (spec 000 §B) against pve-sim over real SSH."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from deployments.autoscale.routes import public as public_routes
from tests.deployments.autoscale.conftest import open_client

FAMILIES = (
    "autoscale_api_requests_total",
    "autoscale_api_request_duration_seconds",
    "autoscale_api_scaling_actions_total",
    "autoscale_api_scaling_failures_total",
    "autoscale_api_container_cpu_cores",
    "autoscale_api_container_memory_mb",
)


def _families(text: str) -> set[str]:
    return {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")}


def value(text: str, name: str, **labels: str) -> float | None:
    """The value of the series `name{labels}` in a scrape (None when absent)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return None


async def test_metrics_exposes_exactly_the_six_families_without_a_key(client):
    await client.get("/resource/lxc/config", params={"lxc_id": 101})
    await client.post("/scale/cores", json={"lxc_id": 101, "cores": 3})
    await client.post("/scale/cores", json={"lxc_id": 999, "cores": 3})
    response = await client.get("/metrics", headers={"X-API-Key": ""})
    assert response.status_code == 200
    assert _families(response.text) == set(FAMILIES)
    assert value(response.text, "autoscale_api_container_cpu_cores", container_id="101") is not None
    assert (
        value(response.text, "autoscale_api_scaling_actions_total", container_id="101", resource="cpu", action="set")
        == 1
    )
    failures = "autoscale_api_scaling_failures_total"
    assert value(response.text, failures, container_id="999", resource="cpu", reason="not_found") == 1


async def test_metrics_answers_501_when_the_library_is_missing(client, monkeypatch):
    monkeypatch.setattr(public_routes, "metrics_library_available", lambda: False)
    response = await client.get("/metrics")
    assert response.status_code == 501
    assert "prometheus_client" in response.json()["message"]


async def test_every_request_is_counted_with_the_matched_route(client):
    await client.get("/resource/lxc/config", params={"lxc_id": "abc"})
    await client.get("/resource/lxc/config", params={"lxc_id": 101}, headers={"X-API-Key": "wrong"})
    await client.get("/no/such/route")
    text = (await client.get("/metrics")).text
    name = "autoscale_api_requests_total"
    assert value(text, name, method="GET", endpoint="/resource/lxc/config", status="400") == 1
    assert value(text, name, method="GET", endpoint="/resource/lxc/config", status="403") == 1
    assert value(text, name, method="GET", endpoint="unmatched", status="404") == 1


async def test_health_probes_every_host_over_ssh(client, sim):
    before = len(sim.commands())
    response = await client.get("/health/check")
    assert response.status_code == 200
    assert response.json() == {"status": "healthy", "checks": {"lxc_commands": {"ok": True, "detail": "ok"}}}
    assert any(c.endswith("pct list") for c in sim.commands()[before:])


async def test_health_is_503_when_a_host_is_unreachable(config_factory, sim):
    hosts = {"pve1": {**sim.zone()}, "gone": {**sim.zone(), "port": 1, "connect_timeout": 2}}
    async for client in open_client(config_factory(hosts=hosts)):
        response = await client.get("/health/check")
        assert response.status_code == 503
        body = response.json()
        assert body["status"] == "unhealthy"
        assert body["checks"]["lxc_commands"]["ok"] is False
        assert body["checks"]["lxc_commands"]["detail"].startswith("gone:")


async def test_config_reads_pct_config_and_the_vm_alias_matches(client):
    lxc = await client.get("/resource/lxc/config", params={"lxc_id": "0103"})
    vm = await client.get("/resource/vm/config", params={"vm_id": 103})
    assert lxc.status_code == 200
    data = lxc.json()["data"]
    assert data["lxc_id"] == data["vm_id"] == "103"
    assert data["memory_mb"] == 1024 and isinstance(data["cores"], int)
    assert vm.json()["data"] == data


async def test_status_and_its_alias(client):
    for path in ("/resource/lxc/status", "/resource/vm/status"):
        response = await client.get(path, params={"container_id": 103})
        assert response.status_code == 200
        assert response.json()["data"]["status"] == "running"


async def test_scale_cores_runs_pct_set_and_counts(client, sim):
    response = await client.post("/scale/cores", json={"vm_id": "107", "cores": 4})
    assert response.status_code == 200
    assert response.json()["status"] == "success"
    assert sim.model.containers["107"]["config"]["cores"] == 4
    assert any("pct set 107 --cores 4" in c for c in sim.commands())


async def test_scale_ram_and_storage(client, sim):
    assert (await client.post("/scale/ram", json={"lxc_id": 105, "memory": 2048})).status_code == 200
    assert sim.model.containers["105"]["config"]["memory"] == 2048
    response = await client.post("/scale/storage/increase", json={"lxc_id": 105, "disk_size": 2})
    assert response.status_code == 200
    assert "size=10G" in sim.model.containers["105"]["config"]["rootfs"]
    text = (await client.get("/metrics")).text
    name = "autoscale_api_scaling_actions_total"
    assert value(text, name, container_id="105", resource="storage", action="increase") == 1


async def test_a_failed_pct_set_is_a_classified_failure(client, sim):
    sim.model.containers["109"]["lock"] = "backup"
    try:
        response = await client.post("/scale/cores", json={"lxc_id": 109, "cores": 3})
    finally:
        sim.model.containers["109"]["lock"] = None
    assert response.status_code == 500
    assert response.json()["status"] == "error"
    text = (await client.get("/metrics")).text
    name = "autoscale_api_scaling_failures_total"
    assert value(text, name, container_id="109", resource="cpu", reason="locked") == 1


@pytest.mark.parametrize(
    "body",
    [
        {"cores": 2},
        {"lxc_id": "12a", "cores": 2},
        {"lxc_id": 5, "cores": 2},
        {"lxc_id": 101, "vm_id": 102, "cores": 2},
        {"lxc_id": 101, "cores": 0},
        {"lxc_id": 101, "cores": "many"},
    ],
)
async def test_bad_bodies_are_400_validation_failed(client, body):
    response = await client.post("/scale/cores", json=body)
    assert response.status_code == 400
    assert response.json()["message"] == "Validation failed"
    assert response.json()["errors"]


async def test_unknown_container_is_404(client):
    response = await client.get("/resource/lxc/config", params={"lxc_id": 999})
    assert response.status_code == 404


async def test_missing_key_401_wrong_key_403(config_factory):
    async for client in open_client(config_factory(), key=None):
        assert (await client.get("/resource/lxc/config", params={"lxc_id": 101})).status_code == 401
        wrong = await client.get("/resource/lxc/config", params={"lxc_id": 101}, headers={"X-API-Key": "nope"})
        assert wrong.status_code == 403
        assert wrong.json() == {"status": "error", "message": "Invalid API key"}


async def test_rate_limit_applies_to_remote_clients_not_to_loopback(config_factory):
    config = config_factory(rate_limit={"max_requests_per_minute": 2, "time_window_seconds": 60})
    async for remote in open_client(config, client_ip="203.0.113.9"):
        codes = [(await remote.get("/resource/lxc/status", params={"lxc_id": 101})).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        limited = await remote.get("/health/check")
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
    async for local in open_client(config):
        codes = [(await local.get("/resource/lxc/status", params={"lxc_id": 101})).status_code for _ in range(5)]
        assert codes == [200] * 5


async def test_an_oversized_body_is_refused_before_parsing(client, sim):
    response = await client.post(
        "/scale/cores",
        content=b'{"lxc_id": 101, "cores": 2, "pad": "' + b"x" * 40_000 + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["status"] == "error"


def documented(doc: dict, path: str, method: str, status: int) -> str | None:
    """The schema `$ref` the OpenAPI document gives `status` on `method path` (None when undocumented)."""
    response = doc["paths"][path][method]["responses"].get(str(status))
    return None if response is None else response["content"]["application/json"]["schema"]["$ref"]


async def test_the_413_is_documented_on_every_operation(client):
    doc = (await client.get("/openapi.json")).json()
    for path, operations in doc["paths"].items():
        for method in operations:
            assert documented(doc, path, method, 413) == "#/components/schemas/ErrorBody", (method, path)
    response = await client.post(
        "/scale/ram", content=b"{" + b" " * 20_000 + b"}", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert set(response.json()) == {"status", "message"} and response.json()["status"] == "error"


async def test_the_501_of_metrics_is_documented(client, monkeypatch):
    doc = (await client.get("/openapi.json")).json()
    assert documented(doc, "/metrics", "get", 501) == "#/components/schemas/ErrorBody"
    monkeypatch.setattr(public_routes, "metrics_library_available", lambda: False)
    response = await client.get("/metrics")
    assert response.status_code == 501 and set(response.json()) == {"status", "message"}


async def test_the_query_parameters_of_the_resource_routes_are_documented(client):
    doc = (await client.get("/openapi.json")).json()
    for path in ("/resource/lxc/config", "/resource/lxc/status", "/resource/vm/config", "/resource/vm/status"):
        params = {p["name"]: p for p in doc["paths"][path]["get"]["parameters"]}
        assert set(params) == {"lxc_id", "vm_id", "container_id"}
        assert all(p["in"] == "query" and not p["required"] for p in params.values())
    response = await client.get("/resource/vm/status", params={"lxc_id": 101, "vm_id": 102})
    assert response.status_code == 400 and response.json()["errors"] == ["lxc_id, vm_id and container_id disagree"]


HOSTILE_IDS = {
    "a float": 101.0,
    "a float string": "101.0",
    "Arabic-Indic digits": "\u0661\u0660\u0661",
    "full-width digits": "\uff11\uff10\uff11",
    "superscript digits": "\u00b9\u2070\u00b9",
    "5,000 digits": "1" * 5000,
    "an exponent": "1e2",
    "a sign": "+101",
    "underscores": "1_01",
}


@pytest.mark.parametrize("what", list(HOSTILE_IDS))
async def test_container_ids_are_ascii_digits_only_in_bodies(client, what):
    response = await client.post("/scale/cores", json={"lxc_id": HOSTILE_IDS[what], "cores": 2})
    _refused(response, what)


async def test_a_5000_digit_json_number_is_a_body_error_not_echoed(client):
    raw = '{"lxc_id": ' + "1" * 5000 + ', "cores": 2}'
    response = await client.post("/scale/cores", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["status"] == "error"
    assert len(response.text) < 1000 and "integer string conversion" not in response.text


@pytest.mark.parametrize("what", list(HOSTILE_IDS))
async def test_container_ids_are_ascii_digits_only_in_queries(client, what):
    response = await client.get("/resource/lxc/config", params={"lxc_id": str(HOSTILE_IDS[what])})
    _refused(response, what)


def _refused(response, what):
    assert response.status_code == 400, (what, response.status_code, response.text[:300])
    body = response.json()
    assert body["status"] == "error" and body["message"] == "Validation failed", what
    assert len(response.text) < 1000, what  # the id is not echoed back
    assert "integer string conversion" not in response.text and "4300" not in response.text, what
    assert any("digits" in e for e in body["errors"]), (what, body["errors"])
