"""Orchestrator API (spec 002 §4 D): nodes, policy, scale, threats, fleet-wide blacklist and rules."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.mitigation.node import MitigationNode
from deployments.asn.app import create_app as create_asn_app
from rayfleet.state import LocalActorHandle
from tests.deployments.asn.conftest import API_KEY as ASN_KEY
from tests.deployments.asn.conftest import tiny_config
from tests.deployments.asn.tinydata import PREFIX_ROWS, write_dataset
from tests.deployments.mitigation.conftest import Fleet, fleet_settings
from tests.deployments.mitigation.receivers import serve_in_thread
from tests.polling import eventually

API = "/api/v1"


def from_source(address: str) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(transport=transport, trust_env=False, timeout=5.0)


async def _is(value: Awaitable[str], expected: str) -> bool:
    return await value == expected


async def test_nodes_lists_every_registered_node(fleet):
    body = (await fleet.client.get(f"{API}/nodes")).json()
    assert len(body["nodes"]) == 1
    node = body["nodes"][0]
    assert {k: node[k] for k in ("id", "address", "status", "mode")} == {
        "id": "node-1",
        "address": fleet.node().address,
        "status": "healthy",
        "mode": "l7",
    }
    assert node["load"] >= 0 and node["actor_pid"] > 0


async def test_scale_up_creates_nodes_and_scale_down_drains_them(fleet, data_plane):
    up = await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 2})
    assert up.status_code == 200
    assert up.json()["nodes"] == ["node-2", "node-3"] and up.json()["total"] == 3
    nodes = (await fleet.client.get(f"{API}/nodes")).json()["nodes"]
    assert len({n["address"] for n in nodes}) == 3
    for node_id in ("node-2", "node-3"):
        assert (await data_plane.get(fleet.node_url(node_id) + "/")).status_code == 200
    addresses = {node_id: fleet.node_url(node_id) for node_id in ("node-1", "node-2", "node-3")}
    down = await fleet.client.post(f"{API}/scale", json={"action": "scale_down", "count": 2})
    assert down.status_code == 200 and down.json()["total"] == 1
    drained_address = addresses[down.json()["nodes"][0]]
    assert len((await fleet.client.get(f"{API}/nodes")).json()["nodes"]) == 1
    with pytest.raises(httpx.TransportError):  # the drained node's HAProxy is gone
        await data_plane.get(drained_address + "/")


class GatedNode(MitigationNode):
    """A real node whose start waits for `gate` first (a cold Ray worker on a busy machine)."""

    gate: asyncio.Event

    async def start(self, share: Any = None) -> dict[str, Any]:
        await self.gate.wait()
        return await super().start(share)


class RayLikeHandle(LocalActorHandle):
    """The in-process stand-in, except that a call goes on when its caller stops waiting for it, as a
    Ray actor's does (a start past the fleet's budget still starts the node)."""

    async def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return await asyncio.shield(asyncio.ensure_future(super()._call(name, args, kwargs)))


async def test_a_node_that_starts_slower_than_the_budget_is_answered_202_starting_and_joins(make_fleet, data_plane):
    """`POST /scale` whose node does not start within `fleet.node_start_timeout_s` answers 202 with
    the node `starting` (before: a server error, though the node stayed in the fleet). The node,
    watched by the heartbeat, joins once it answers: it serves, and enforces a fleet ban made while
    it was starting."""
    fleet = await make_fleet(replace_dead_nodes=False)
    own = fleet.fleet
    own.settings = own.settings.model_copy(update={"node_start_timeout_s": 0.2})
    gate = asyncio.Event()

    def slow(node_id: str) -> Any:
        settings = own._node_settings(webhooks=own.settings.webhooks.model_dump())
        node = GatedNode(node_id, settings.model_dump(), own.name)
        node.gate = gate
        return RayLikeHandle(node)

    own._node_handle = slow  # type: ignore[method-assign]
    up = await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 1})
    assert up.status_code == 202, up.text
    assert up.json() == {"action": "scale_up", "count": 1, "nodes": ["node-2"], "starting": ["node-2"], "total": 2}
    listed = {n["id"]: n["status"] for n in (await fleet.client.get(f"{API}/nodes")).json()["nodes"]}
    assert listed == {"node-1": "healthy", "node-2": "starting"}  # in the fleet, watched until it answers
    banned = await fleet.client.post(f"{API}/blacklist", json={"ip": "127.0.0.48", "duration_seconds": 600})
    assert banned.status_code == 201 and banned.json()["nodes"] == ["node-1"]
    gate.set()
    entry = own.nodes["node-2"]
    await eventually(lambda: entry.status == "healthy" and not own._stale, timeout=20, what="node-2 joins")
    async with from_source("127.0.0.48") as blocked:
        with pytest.raises(httpx.TransportError):
            await blocked.get(fleet.node_url("node-2") + "/")
    assert (await data_plane.get(fleet.node_url("node-2") + "/")).status_code == 200
    listed = {n["id"]: n["status"] for n in (await fleet.client.get(f"{API}/nodes")).json()["nodes"]}
    assert listed == {"node-1": "healthy", "node-2": "healthy"}


@pytest.mark.parametrize(
    "body,status",
    [
        ({"action": "scale_up", "count": 100}, 422),
        ({"action": "scale_up", "count": 8}, 409),
        ({"action": "scale_down", "count": 2}, 409),
        ({"action": "explode", "count": 1}, 422),
        ({"action": "scale_up"}, 422),
    ],
)
async def test_scale_refuses_what_it_cannot_do(fleet, body, status):
    response = await fleet.client.post(f"{API}/scale", json=body)
    assert response.status_code == status
    assert "error" in response.json()
    assert len((await fleet.client.get(f"{API}/nodes")).json()["nodes"]) == 1


async def test_rate_limit_policy_applies_to_every_node_including_later_ones(fleet, data_plane):
    deployed = await fleet.client.post(
        f"{API}/policy", json={"name": "strict", "rules": [{"type": "rate_limit", "value": 3}]}
    )
    assert deployed.status_code == 200
    assert deployed.json()["nodes"] == ["node-1"] and deployed.json()["status"] == "deployed"
    await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 1})
    for node_id in ("node-1", "node-2"):
        codes = [(await data_plane.get(fleet.node_url(node_id) + "/")).status_code for _ in range(8)]
        assert codes[:3] == [200, 200, 200]
        assert 429 in codes[3:]


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x", "rules": []},
        {"name": "x", "rules": [{"type": "rate_limit", "value": 0}]},
        {"name": "x", "rules": [{"type": "teleport"}]},
        {"rules": [{"type": "rate_limit", "value": 5}]},
    ],
)
async def test_bad_policies_are_refused(fleet, body):
    assert (await fleet.client.post(f"{API}/policy", json=body)).status_code == 422


async def test_geo_block_without_an_asn_api_configured_is_a_conflict_not_an_outage(fleet):
    response = await fleet.client.post(
        f"{API}/policy", json={"name": "geo", "rules": [{"type": "geo_block", "countries": ["DK"]}]}
    )
    assert response.status_code == 409
    assert "ASN" in response.json()["error"]["message"]


@pytest.fixture
def asn_api(tmp_path: Path):
    """The ASN app on a loopback port; its tiny dataset puts 127.0.0.64/27 in DK (AS13057)."""
    pkg = write_dataset(tmp_path / "pkg", rows=[*PREFIX_ROWS, ("127.0.0.64/27", 13057)])
    with serve_in_thread(create_asn_app(tiny_config(tmp_path, pkg))) as url:
        yield url


async def asn_loaded(asn_api: str) -> None:
    async with httpx.AsyncClient(trust_env=False) as probe:  # the dataset loads in the background

        async def loaded() -> bool:
            answer = await probe.get(f"{asn_api}/api/v1/country/DK/prefixes", headers={"X-API-Key": ASN_KEY})
            return answer.status_code == 200

        await eventually(loaded, what="the ASN dataset loaded")


async def test_geo_block_uses_the_asn_apis_country_prefixes(make_fleet, asn_api):
    await asn_loaded(asn_api)
    fleet = await make_fleet(asn_api_url=asn_api)
    fleet.fleet.settings = fleet.fleet.settings.model_copy(update={"asn_api_key": ASN_KEY})
    body = {"name": "no-dk", "rules": [{"type": "geo_block", "countries": ["dk"]}]}
    response = await fleet.client.post(f"{API}/policy", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["geo_prefixes"] == 1
    assert "127.0.0.64/27 DK" in fleet.node().paths.geo.read_text()
    async with from_source("127.0.0.70") as danish, from_source("127.0.0.20") as other:
        with pytest.raises(httpx.TransportError):
            await danish.get(fleet.node_url() + "/")
        assert (await other.get(fleet.node_url() + "/")).status_code == 200

    removed = await fleet.client.delete(f"{API}/policy/geo_block")  # lifted again
    assert removed.status_code == 200 and removed.json()["blocked_countries"] == []
    assert removed.json()["geo_prefixes"] == 0 and fleet.node().paths.geo.read_text() == ""
    async with from_source("127.0.0.70") as danish:
        assert (await danish.get(fleet.node_url() + "/")).status_code == 200
    assert (await fleet.client.delete(f"{API}/policy/geo_block")).status_code == 404


async def test_blocked_countries_in_the_config_are_applied_at_start(origin, asn_api):
    await asn_loaded(asn_api)
    settings = fleet_settings(origin, asn_api_url=asn_api, blocked_countries=["dk"])
    fleet = Fleet(settings.model_copy(update={"asn_api_key": ASN_KEY}))
    try:
        await fleet.handle.ensure_started.remote()
        shown = (await fleet.client.get(f"{API}/policy")).json()
        assert shown["blocked_countries"] == ["DK"] and shown["geo_prefixes"] == 1
        assert shown["policy"]["name"] == "config: node.blocked_countries"
        async with from_source("127.0.0.70") as danish, from_source("127.0.0.20") as other:
            with pytest.raises(httpx.TransportError):
                await danish.get(fleet.node_url() + "/")
            assert (await other.get(fleet.node_url() + "/")).status_code == 200
    finally:
        await fleet.close()


async def test_fleet_blacklist_reaches_every_node_and_later_ones(fleet):
    await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 1})
    response = await fleet.client.post(
        f"{API}/blacklist", json={"ip": "127.0.0.33", "reason": "abuse", "duration_seconds": 60}
    )
    assert response.status_code == 201
    assert response.json()["nodes"] == ["node-1", "node-2"]
    await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 1})
    async with from_source("127.0.0.33") as banned, from_source("127.0.0.34") as fine:
        for node_id in ("node-1", "node-2", "node-3"):
            with pytest.raises(httpx.TransportError):
                await banned.get(fleet.node_url(node_id) + "/")
            assert (await fine.get(fleet.node_url(node_id) + "/")).status_code == 200


async def test_fleet_rules_are_enforced_on_every_node(fleet, data_plane):
    await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 2})
    created = await fleet.client.post(
        f"{API}/rules", json={"pattern": "forbidden-zone", "action": "block", "severity": "high"}
    )
    assert created.status_code == 201 and created.json()["nodes"] == ["node-1", "node-2", "node-3"]
    for node_id in ("node-1", "node-2", "node-3"):
        assert (await data_plane.get(fleet.node_url(node_id) + "/forbidden-zone")).status_code == 403
    rule_id = created.json()["id"]
    assert (await fleet.client.delete(f"{API}/rules/{rule_id}")).status_code == 200
    for node_id in ("node-1", "node-2", "node-3"):
        assert (await data_plane.get(fleet.node_url(node_id) + "/forbidden-zone")).status_code == 200


async def test_threats_sum_floods_across_the_fleet(make_fleet):
    fleet = await make_fleet(flood_rps=5, initial_nodes=2)
    async with from_source("127.0.0.77") as attacker:
        for node_id in ("node-1", "node-2"):
            codes = [(await attacker.get(fleet.node_url(node_id) + "/")).status_code for _ in range(30)]
            assert codes[-1] == 429

    async def both_nodes() -> dict | None:
        threats = (await fleet.client.get(f"{API}/threats")).json()
        return threats if threats["active_threats"] == 2 and threats["attack_types"]["http_flood"] >= 40 else None

    threats = await eventually(both_nodes, what="the flood seen by both nodes' polls")
    assert threats["active_threats"] == 2  # the same source, active on two nodes
    assert threats["attack_types"]["http_flood"] >= 40
    top = threats["top_attackers"][0]
    assert top["ip"] == "127.0.0.77" and top["attacks"] >= 40
    assert set(threats["attack_types"]) >= {"syn_flood", "http_flood", "slowloris"}


async def test_health_needs_no_key_and_the_api_does(fleet):
    assert (await fleet.client.get("/health", headers={"X-Service-API-Key": ""})).json()["healthy_nodes"] == 1
    for method, path in (("GET", "/nodes"), ("POST", "/policy"), ("POST", "/scale"), ("GET", "/threats")):
        response = await fleet.client.request(method, API + path, headers={"X-Service-API-Key": ""})
        assert response.status_code == 401
    assert (await fleet.client.get("/metrics", headers={"X-Service-API-Key": ""})).status_code == 401


async def test_a_node_whose_data_plane_died_is_reported_unhealthy(fleet):
    await fleet.node().proc.stop()  # stopped for good: its supervisor does not restart it

    async def status() -> str:
        return str((await fleet.client.get(f"{API}/nodes")).json()["nodes"][0]["status"])

    await eventually(lambda: _is(status(), "unhealthy"), what="the node reported unhealthy")
    degraded = await fleet.client.get("/health")
    assert degraded.status_code == 503 and degraded.json()["status"] == "degraded"
    # found by the fuzzer's review: the degraded 503 was missing from the OpenAPI
    documented = (await fleet.client.get("/openapi.json")).json()["paths"]["/health"]["get"]["responses"]
    assert documented["503"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Health"}


async def test_deleting_an_unknown_fleet_rule_is_a_documented_404(fleet):
    # found by the fuzzer: the 404 was answered but not in the OpenAPI
    response = await fleet.client.delete(f"{API}/rules/rule-nope")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "rule rule-nope not found"}}
    paths = (await fleet.client.get("/openapi.json")).json()["paths"]
    documented = paths["/api/v1/rules/{rule_id}"]["delete"]["responses"]
    assert documented["404"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}


async def test_fleet_metrics_are_documented_as_prometheus_text(fleet):
    # found by the fuzzer: /metrics answers text/plain but the OpenAPI said application/json
    response = await fleet.client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    documented = (await fleet.client.get("/openapi.json")).json()["paths"]["/metrics"]["get"]["responses"]["200"]
    assert list(documented["content"]) == ["text/plain"]
