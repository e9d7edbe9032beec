"""Node management API (spec 002 §4 D) against a real HAProxy data plane."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.deployments.mitigation.conftest import HEADERS
from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"


async def _equal(value: Any, expected: Any) -> bool:
    return await value == expected


async def _fleet_counted(fleet: Any) -> bool:
    text = (await fleet.client.get("/metrics", headers=HEADERS)).text
    return 'service_packets_processed_total{node="node-1"} 5.0' in text


async def test_status_reports_the_real_mode_uptime_and_connections(fleet, data_plane):
    await data_plane.get(fleet.node_url() + "/")

    async def counted() -> dict | None:
        body = (await fleet.client.get(f"{NODE}/status")).json()
        return body if body["connections"]["total"] >= 1 else None

    body = await eventually(counted, what="the connection counted")
    assert body["status"] == "running"
    assert body["mode"] == "l7"
    assert 0 <= body["uptime_seconds"] < 600
    assert body["connections"]["total"] >= 1
    assert body["health"] == "healthy"
    assert body["address"] == fleet.node().address


async def test_a_rule_takes_effect_on_the_data_plane_and_counts_hits(fleet, data_plane):
    url = fleet.node_url() + "/download/SECRET-REPORT.pdf"
    assert (await data_plane.get(url)).status_code == 200
    created = await fleet.client.post(
        f"{NODE}/rules", json={"pattern": r"secret-report\.pdf", "action": "block", "severity": "high"}
    )
    assert created.status_code == 201
    body = created.json()
    assert body["status"] == "active" and body["id"].startswith("rule-") and body["created_at"]
    assert (await data_plane.get(url)).status_code == 403
    assert (await data_plane.get(fleet.node_url() + "/download/other.pdf")).status_code == 200

    async def hit() -> dict | None:
        rules = (await fleet.client.get(f"{NODE}/rules")).json()
        return rules if rules["rules"] and rules["rules"][0]["hits"] >= 1 else None

    rules = await eventually(hit, what="the rule's hit read from the log stream")
    assert rules["total"] == 1
    assert rules["rules"][0]["id"] == body["id"] and rules["rules"][0]["hits"] == 1
    deleted = await fleet.client.delete(f"{NODE}/rules/{body['id']}")
    assert deleted.status_code == 200
    assert (await data_plane.get(url)).status_code == 200
    assert (await fleet.client.get(f"{NODE}/rules")).json()["total"] == 0


async def test_rule_ids_never_collide(fleet):
    ids = set()
    for n in range(20):
        response = await fleet.client.post(f"{NODE}/rules", json={"pattern": f"probe-{n}", "action": "log"})
        ids.add(response.json()["id"])
    assert len(ids) == 20


async def test_log_rules_count_without_blocking_and_score_rules_add_up(fleet, data_plane):
    await fleet.client.post(f"{NODE}/rules", json={"pattern": "watch-me", "action": "log", "severity": "low"})
    await fleet.client.post(f"{NODE}/rules", json={"pattern": "half-bad", "action": "score", "severity": "medium"})
    await fleet.client.post(f"{NODE}/rules", json={"pattern": "other-half", "action": "score", "severity": "low"})
    assert (await data_plane.get(fleet.node_url() + "/watch-me")).status_code == 200
    # medium (3) alone stays under the threshold of 5; medium + low = 5 blocks
    assert (await data_plane.get(fleet.node_url() + "/half-bad")).status_code == 200
    assert (await data_plane.get(fleet.node_url() + "/half-bad/other-half")).status_code == 403
    expected = {"watch-me": 1, "half-bad": 2, "other-half": 1}

    async def hits() -> dict[str, int]:
        return {r["pattern"]: r["hits"] for r in (await fleet.client.get(f"{NODE}/rules")).json()["rules"]}

    await eventually(lambda: _equal(hits(), expected), what="every hit counted")
    assert await hits() == expected  # and no more


@pytest.mark.parametrize(
    "body",
    [
        {"pattern": "(unclosed", "action": "block", "severity": "high"},
        {"pattern": r"(a)\1", "action": "block", "severity": "high"},
        {"pattern": r"\N{DIGIT ONE}", "action": "block", "severity": "high"},  # valid in Python, refused by HAProxy
        {"pattern": "x", "action": "challenge", "severity": "high"},
        {"pattern": "x", "action": "block", "severity": "urgent"},
        {"pattern": "", "action": "block", "severity": "high"},
        {"action": "block"},
    ],
)
async def test_bad_rules_are_refused_with_422(fleet, body):
    response = await fleet.client.post(f"{NODE}/rules", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert (await fleet.client.get(f"{NODE}/rules")).json()["total"] == 0


async def test_deleting_an_unknown_rule_is_404(fleet):
    response = await fleet.client.delete(f"{NODE}/rules/rule-nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


async def test_blacklist_blocks_the_source_then_expires(fleet, data_plane):
    assert (await data_plane.get(fleet.node_url() + "/")).status_code == 200
    response = await fleet.client.post(
        f"{NODE}/blacklist", json={"ip": "127.0.0.1", "reason": "test", "duration_seconds": 2}
    )
    assert response.status_code == 201
    assert response.json()["ip"] == "127.0.0.1" and response.json()["expires_at"]
    with pytest.raises(httpx.TransportError):  # rejected at connection time
        await data_plane.get(fleet.node_url() + "/")

    async def served() -> bool:
        return (await data_plane.get(fleet.node_url() + "/")).status_code == 200

    expired = "the blacklist entry expired"  # polled at a slow pace: the data plane counts what it refuses
    await eventually(served, timeout=10, interval=0.25, ignore=(httpx.TransportError,), what=expired)
    # the node's sweep drops the expired entry from its map file too
    await eventually(lambda: "127.0.0.1" not in fleet.node().blacklist, timeout=2, what="the entry swept")
    # the map file is rewritten just after the sweep (the file is what a restarted HAProxy loads)
    await eventually(
        lambda: "127.0.0.1" not in fleet.node().paths.blacklist.read_text(), timeout=5, what="the map file swept"
    )


async def test_blacklist_by_cidr_spares_other_sources(fleet, data_plane):
    await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.0/30", "duration_seconds": 60})
    with pytest.raises(httpx.TransportError):
        await data_plane.get(fleet.node_url() + "/")

    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.9")
    async with httpx.AsyncClient(transport=transport, trust_env=False) as other:
        assert (await other.get(fleet.node_url() + "/")).status_code == 200


@pytest.mark.parametrize("ip", ["not-an-ip", "300.1.1.1", "127.0.0.1/99"])
async def test_blacklist_refuses_bad_addresses(fleet, ip):
    response = await fleet.client.post(f"{NODE}/blacklist", json={"ip": ip, "duration_seconds": 5})
    assert response.status_code == 422


async def test_blacklist_refuses_bad_durations(fleet):
    response = await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.5", "duration_seconds": 0})
    assert response.status_code == 422


async def test_stats_are_counters_of_the_data_plane(fleet, data_plane):
    for _ in range(5):
        await data_plane.get(fleet.node_url() + "/")
    await data_plane.get(fleet.node_url() + "/?q=%3Cscript%3Ealert(1)%3C/script%3E")

    async def counted() -> dict | None:
        stats = (await fleet.client.get(f"{NODE}/stats")).json()
        return stats if stats["packets_processed"] >= 6 and stats["attacks_blocked"] >= 1 else None

    stats = await eventually(counted, what="the requests counted")
    assert stats["packets_processed"] >= 6
    assert stats["attacks_blocked"] >= 1
    assert stats["memory_mb"] > 1
    assert set(stats) == {
        "packets_processed",
        "attacks_blocked",
        "requests_per_second",
        "latency_ms",
        "cpu_percent",
        "memory_mb",
    }


async def test_unknown_node_is_404(fleet):
    response = await fleet.client.get("/nodes/node-99/api/v1/status")
    assert response.status_code == 404


@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/status"),
        ("POST", "/rules"),
        ("GET", "/rules"),
        ("DELETE", "/rules/x"),
        ("POST", "/blacklist"),
        ("GET", "/stats"),
    ],
)
async def test_every_node_route_needs_the_key(fleet, method, path):
    missing = await fleet.client.request(method, NODE + path, headers={"X-Service-API-Key": ""})
    assert missing.status_code == 401
    wrong = await fleet.client.request(method, NODE + path, headers={"X-Service-API-Key": "x" * 48})
    assert wrong.status_code == 403
    assert wrong.json()["error"]["code"] == "forbidden"


async def test_node_metrics_need_the_key_and_carry_the_six_families(fleet, data_plane):
    await data_plane.get(fleet.node_url() + "/")
    assert (await fleet.client.get("/nodes/node-1/metrics", headers={"X-Service-API-Key": ""})).status_code == 401
    families = (
        "service_packets_processed_total",
        "service_attacks_blocked_total",
        "service_latency_seconds",
        "service_connections_active",
        "service_cpu_usage_percent",
        "service_memory_usage_bytes",
    )

    async def rendered() -> list[str]:
        text = (await fleet.client.get("/nodes/node-1/metrics", headers=HEADERS)).text
        return [family for family in families if family not in text]

    await eventually(lambda: _equal(rendered(), []), what="every family rendered")


async def test_node_metrics_are_documented_as_prometheus_text(fleet):
    # found by the fuzzer: the node's /metrics answers text/plain but its OpenAPI said application/json
    response = await fleet.client.get("/nodes/node-1/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    paths = (await fleet.client.get("/nodes/node-1/openapi.json")).json()["paths"]
    assert list(paths["/metrics"]["get"]["responses"]["200"]["content"]) == ["text/plain"]


async def test_latency_histogram_is_fed_from_the_log_stream(make_fleet, data_plane):
    fleet = await make_fleet(log_sample_percent=100)
    for _ in range(5):
        await data_plane.get(fleet.node_url() + "/")

    async def latency_count() -> float:
        text = (await fleet.client.get("/nodes/node-1/metrics", headers=HEADERS)).text
        lines = [line for line in text.splitlines() if line.startswith("service_latency_seconds_count")]
        return float(lines[0].split()[-1]) if lines else 0.0

    await eventually(lambda: _equal(latency_count(), 5.0), what="five latencies observed")
    await eventually(lambda: _fleet_counted(fleet), what="the poll counted the requests")
    fleet_text = (await fleet.client.get("/metrics", headers=HEADERS)).text
    assert 'service_packets_processed_total{node="node-1"} 5.0' in fleet_text


async def test_wrong_method_is_405_in_the_error_shape(fleet):
    response = await fleet.client.put(f"{NODE}/status")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


async def test_an_unexpected_failure_is_500_in_the_error_shape_without_details(fleet):
    def broken() -> None:
        raise RuntimeError("secret internals")

    fleet.fleet.list_nodes = broken
    transport = httpx.ASGITransport(app=fleet.app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://m", headers=HEADERS) as client:
        response = await client.get("/api/v1/nodes")
    assert response.status_code == 500
    assert response.json() == {"error": {"code": "internal_error", "message": "internal error"}}
