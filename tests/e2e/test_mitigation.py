"""Tier 3: the mitigation fleet deployed by `rayfleet up`, through Serve at /mitigation.

The fleet actor and the node actors are real Ray actors; each node's HAProxy sits in
front of the demo origin (this cluster's own Serve proxy) on its own loopback port.
"""

from __future__ import annotations

import csv
import os
import re
import signal
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import DATA
from tests.e2e.conftest import needs_app
from tests.polling import eventually_sync

PREFIX = "/mitigation"
API = f"{PREFIX}/api/v1"


@pytest.fixture
def mit(cluster, http: httpx.Client) -> httpx.Client:
    needs_app(cluster, "mitigation")
    return http


@pytest.fixture
def key(cluster_secrets) -> dict[str, str]:
    value = cluster_secrets["MANAGEMENT_API_KEY"]
    assert re.fullmatch(r"[0-9a-f]{48}", value)
    return {"X-Service-API-Key": value}


def wait_until(probe, seconds: float = 20.0):
    return eventually_sync(probe, timeout=seconds, interval=0.25)


def node_address(mit: httpx.Client, key: dict[str, str], node_id: str = "node-1") -> str:
    nodes = mit.get(f"{API}/nodes", headers=key).json()["nodes"]
    return next(n["address"] for n in nodes if n["id"] == node_id)


def test_every_mitigation_route_of_routes_tsv_is_served(mit, key):
    with open(DATA / "routes.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t") if r and r[0].startswith("mitigation_")]
    assert len(rows) == 12
    node_schema = mit.get(f"{PREFIX}/nodes/node-1/openapi.json", headers=key).json()["paths"]
    fleet_schema = mit.get(f"{PREFIX}/openapi.json", headers=key).json()["paths"]
    for component, method, path in rows:
        base, schema = (
            (f"{PREFIX}/nodes/node-1", node_schema) if component == "mitigation_node" else (PREFIX, fleet_schema)
        )
        concrete = path.replace("{rule_id}", "rule-unknown")
        body = {"json": {}} if method == "POST" else {}
        response = mit.request(method, base + concrete, headers=key, **body)
        assert response.status_code not in (404, 405) or response.json()["error"]["message"].startswith("rule"), path
        assert path in schema or path == "/metrics", f"{component} {path} is not documented"
        assert mit.request(method, base + concrete, **body).status_code == 401


def test_a_node_sits_in_front_of_the_origin(mit, key):
    address = node_address(mit, key)
    status = mit.get(f"{PREFIX}/nodes/node-1/api/v1/status", headers=key).json()
    assert status["mode"] == "l7" and status["health"] == "healthy" and status["address"] == address
    with httpx.Client(trust_env=False, timeout=10) as client:
        through = client.get(f"http://{address}{PREFIX}/health")
        attack = client.get(f"http://{address}{PREFIX}/health?q=%27%20OR%201%3D1--")
    assert through.status_code == 200 and through.json()["nodes"] >= 1
    assert attack.status_code == 403


def test_rules_take_effect_on_the_data_plane_and_are_deleted(mit, key):
    address = node_address(mit, key)
    created = mit.post(
        f"{PREFIX}/nodes/node-1/api/v1/rules",
        headers=key,
        json={"pattern": "e2e-forbidden", "action": "block", "severity": "high"},
    )
    assert created.status_code == 201
    with httpx.Client(trust_env=False, timeout=10) as client:
        assert client.get(f"http://{address}/e2e-forbidden").status_code == 403
        listed = mit.get(f"{PREFIX}/nodes/node-1/api/v1/rules", headers=key).json()
        assert any(r["id"] == created.json()["id"] for r in listed["rules"])
        assert mit.delete(f"{PREFIX}/nodes/node-1/api/v1/rules/{created.json()['id']}", headers=key).status_code == 200
        assert client.get(f"http://{address}/e2e-forbidden").status_code != 403


def test_fleet_blacklist_and_stats(mit, key):
    address = node_address(mit, key)
    response = mit.post(
        f"{API}/blacklist", headers=key, json={"ip": "127.0.0.211", "reason": "e2e", "duration_seconds": 30}
    )
    assert response.status_code == 201
    transport = httpx.HTTPTransport(local_address="127.0.0.211")
    with httpx.Client(transport=transport, trust_env=False, timeout=5) as banned, pytest.raises(httpx.TransportError):
        banned.get(f"http://{address}/")
    stats = wait_until(
        lambda: (s := mit.get(f"{PREFIX}/nodes/node-1/api/v1/stats", headers=key).json())["attacks_blocked"] >= 1 and s
    )
    assert stats["packets_processed"] >= 1


def test_scale_up_places_a_node_actor_and_scale_down_drains_it(mit, key):
    up = mit.post(f"{API}/scale", headers=key, json={"action": "scale_up", "count": 1})
    assert up.status_code == 200, up.text
    new_id = up.json()["nodes"][0]
    address = node_address(mit, key, new_id)
    with httpx.Client(trust_env=False, timeout=10) as client:
        assert client.get(f"http://{address}{PREFIX}/health").status_code == 200
    down = mit.post(f"{API}/scale", headers=key, json={"action": "scale_down", "count": 1})
    assert down.status_code == 200
    remaining = {n["id"] for n in mit.get(f"{API}/nodes", headers=key).json()["nodes"]}
    assert len(remaining) == 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_killed_node_actor_is_detected_dead_replaced_and_its_haproxy_goes_with_it(mit, key):
    """The fleet sees the actor die (missed heartbeats) and, as `replace_dead_nodes` asks (the default),
    starts a new actor with the same id and address; the killed actor's HAProxy ended with it."""
    up = mit.post(f"{API}/scale", headers=key, json={"action": "scale_up", "count": 1}).json()
    victim = up["nodes"][0]

    def view() -> dict:
        return next(n for n in mit.get(f"{API}/nodes", headers=key).json()["nodes"] if n["id"] == victim)

    # the heartbeat reports the node's children (its HAProxy master first)
    before = wait_until(
        lambda: (n := view())["status"] == "healthy" and n["children"] and n["children"][0]["pid"] and n
    )
    haproxy = before["children"][0]["pid"]
    os.kill(before["actor_pid"], signal.SIGKILL)
    after = wait_until(
        lambda: (n := view())["actor_pid"] not in (None, before["actor_pid"]) and n["status"] == "healthy" and n, 90
    )
    assert after["address"] == before["address"]
    assert wait_until(lambda: not _alive(haproxy), 10), f"the killed actor's HAProxy {haproxy} is still running"
    # the next heartbeat reports the replacement's own HAProxy
    assert wait_until(lambda: view()["children"][0]["pid"] not in (None, haproxy))
    with httpx.Client(trust_env=False, timeout=5) as client:
        assert client.get(f"http://{after['address']}/").status_code < 500  # the replacement serves
    assert mit.post(f"{API}/scale", headers=key, json={"action": "scale_down", "count": 1}).status_code == 200


def test_policy_threats_and_metrics(mit, key):
    deployed = mit.post(
        f"{API}/policy", headers=key, json={"name": "e2e", "rules": [{"type": "rate_limit", "value": 20}]}
    )
    assert deployed.status_code == 200 and "node-1" in deployed.json()["nodes"]
    address = node_address(mit, key)
    transport = httpx.HTTPTransport(local_address="127.0.0.212")

    def attempt(_: int) -> int | str:
        try:
            return attacker.get(f"http://{address}/").status_code
        except httpx.TransportError:  # past flood_rps (50/s) the node resets the flooder's connections
            return "reset"

    # 45 requests from as many threads: they arrive within about a second whatever the origin's
    # latency on a busy machine (one after the other they arrived at under 20/s once, and none was
    # limited), and stay under the flood threshold
    with httpx.Client(transport=transport, trust_env=False, timeout=30) as attacker:
        with ThreadPoolExecutor(max_workers=45) as pool:
            codes = list(pool.map(attempt, range(45)))
    assert 429 in codes and 200 in codes, codes

    def attacker_listed() -> dict | None:
        threats = mit.get(f"{API}/threats", headers=key).json()
        return threats if any(a["ip"] == "127.0.0.212" for a in threats["top_attackers"]) else None

    # the fleet aggregates the nodes' tables on its heartbeat: wait for this attacker, not for any entry
    threats = wait_until(attacker_listed)
    assert threats is not None, mit.get(f"{API}/threats", headers=key).json()
    assert set(threats["attack_types"]) >= {"syn_flood", "http_flood", "slowloris"}
    fleet_metrics = mit.get(f"{PREFIX}/metrics", headers=key).text
    node_metrics = mit.get(f"{PREFIX}/nodes/node-1/metrics", headers=key).text
    for family in ("service_packets_processed_total", "service_attacks_blocked_total", "service_connections_active"):
        assert f'{family}{{node="node-1"}}' in fleet_metrics
        assert family in node_metrics
    mit.post(f"{API}/policy", headers=key, json={"name": "e2e-off", "rules": [{"type": "rate_limit", "value": 100000}]})
