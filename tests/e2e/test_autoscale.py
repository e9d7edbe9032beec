"""Tier 3: the autoscale API through Serve at /autoscale, its monitors and model against the demo pve-sim nodes."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import needs_app
from tests.polling import eventually_sync

PREFIX = "/autoscale"
FAMILIES = {
    "autoscale_api_requests",
    "autoscale_api_request_duration_seconds",
    "autoscale_api_scaling_actions",
    "autoscale_api_scaling_failures",
    "autoscale_api_container_cpu_cores",
    "autoscale_api_container_memory_mb",
}


@pytest.fixture
def api(cluster, http: httpx.Client, cluster_secrets) -> httpx.Client:
    needs_app(cluster, "autoscale")
    http.headers["X-API-Key"] = cluster_secrets["AUTOSCALE_API_KEY"]
    return http


def _total(text: str, family: str, **labels: str) -> float:
    total = 0.0
    for fam in text_string_to_metric_families(text):
        if fam.name == family:
            for s in fam.samples:
                if s.name.endswith("_total") and all(s.labels.get(k) == v for k, v in labels.items()):
                    total += s.value
    return total


def test_health_probes_both_nodes_over_ssh(api: httpx.Client) -> None:
    response = api.get(PREFIX + "/health/check", headers={"X-API-Key": ""})
    assert response.status_code == 200, response.text
    assert response.json()["checks"]["lxc_commands"] == {"ok": True, "detail": "ok"}


def test_config_and_scale_through_serve(api: httpx.Client) -> None:
    config = api.get(PREFIX + "/resource/lxc/config", params={"lxc_id": 102})
    assert config.status_code == 200, config.text
    assert config.json()["data"]["host"] == "pve2"
    scaled = api.post(PREFIX + "/scale/ram", json={"vm_id": "102", "memory": 1536})
    assert scaled.status_code == 200, scaled.text
    assert api.get(PREFIX + "/resource/vm/config", params={"vm_id": 102}).json()["data"]["memory_mb"] >= 1024


def test_keys_are_required_on_protected_routes(api: httpx.Client) -> None:
    assert (
        api.get(PREFIX + "/resource/lxc/status", params={"lxc_id": 101}, headers={"X-API-Key": ""}).status_code == 401
    )
    assert (
        api.get(PREFIX + "/resource/lxc/status", params={"lxc_id": 101}, headers={"X-API-Key": "x"}).status_code == 403
    )


def test_metrics_are_cluster_wide_and_monotonic(api: httpx.Client) -> None:
    first = api.get(PREFIX + "/metrics").text
    names = {f.name for f in text_string_to_metric_families(first)}
    # beside the component's own: the supervised demo hosts (rayfleet.supervisor.ChildMetrics)
    assert names - FAMILIES <= {"rayfleet_child_restarts", "rayfleet_child_up", "rayfleet_child_last_exit_code"}
    assert names >= FAMILIES
    before = _total(first, "autoscale_api_requests", endpoint="/resource/lxc/status")
    replicas = set()
    for _ in range(12):
        r = api.get(PREFIX + "/resource/lxc/status", params={"lxc_id": 103})
        replicas.add(r.headers.get("x-rayfleet-replica"))
    values: list[float] = []

    def read() -> float:
        values.append(
            _total(api.get(PREFIX + "/metrics").text, "autoscale_api_requests", endpoint="/resource/lxc/status")
        )
        return values[-1]

    # each replica flushes its counters to the hub in batches (every second): wait for all 12
    eventually_sync(lambda: read() >= before + 12, timeout=30, interval=0.25, what="12 more requests counted")
    for _ in range(3):
        read()
    assert values[-1] >= before + 12
    assert values == sorted(values)


def test_the_model_scales_containers_through_the_api(api: httpx.Client) -> None:
    """The monitors sample, the model decides and POSTs /scale/* with its key: the counters move."""

    def actions() -> float:
        return _total(api.get(PREFIX + "/metrics").text, "autoscale_api_scaling_actions", action="set")

    eventually_sync(
        lambda: actions() >= 3, timeout=150, interval=3, what="the model's decisions applied through the API"
    )
