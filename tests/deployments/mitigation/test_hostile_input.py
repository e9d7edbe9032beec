"""Hostile input found in issue 23, each a test written before its fix: what HAProxy cannot hold is
refused before anything changes, what a node refused is rolled back, and the answer says what really
happened. Bodies are strictly typed (`true` is not a count)."""

from __future__ import annotations

import pytest

NODE = "/nodes/node-1/api/v1"
API = "/api/v1"
SCOPED = "fe80::1%eth0"  # an address with a zone: HAProxy's maps cannot hold it


async def test_a_scoped_address_is_refused_before_the_node_changes_and_policies_still_deploy(fleet):
    refused = await fleet.client.post(f"{NODE}/blacklist", json={"ip": SCOPED, "duration_seconds": 600})
    assert refused.status_code == 422 and "zone" in refused.json()["error"]["message"]
    node = fleet.node()
    assert node.blacklist == {} and len(node.state.bans) == 0
    assert "fe80" not in node.paths.blacklist.read_text()
    policy = {"name": "after", "rules": [{"type": "rate_limit", "value": 50}]}
    deployed = await fleet.client.post(f"{API}/policy", json=policy)
    assert deployed.status_code == 200 and deployed.json()["nodes"] == ["node-1"]


async def test_a_scoped_address_is_refused_by_the_fleet_without_a_trace(fleet):
    refused = await fleet.client.post(f"{API}/blacklist", json={"ip": SCOPED, "duration_seconds": 600})
    assert refused.status_code == 422
    assert fleet.fleet.blacklist == {} and len(fleet.fleet.kept.bans) == 0


async def test_a_fleet_rule_every_node_refused_is_rolled_back_and_answered_422(make_fleet):
    fleet = await make_fleet(initial_nodes=2)
    refused = await fleet.client.post(f"{API}/rules", json={"pattern": r"\N{DIGIT ONE}", "action": "block"})
    assert refused.status_code == 422 and "HAProxy refused" in refused.json()["error"]["message"]
    assert (await fleet.client.get(f"{API}/rules")).json()["total"] == 0
    assert len(fleet.fleet.kept.rules) == 0
    for node_id in ("node-1", "node-2"):
        assert (await fleet.client.get(f"/nodes/{node_id}/api/v1/rules")).json()["total"] == 0
    late = (await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 1})).json()["nodes"][0]
    assert fleet.node(late).rules == {}  # not handed to a node added later either


async def test_a_node_rule_haproxy_refused_is_not_kept(fleet):
    refused = await fleet.client.post(f"{NODE}/rules", json={"pattern": r"\N{DIGIT ONE}"})
    assert refused.status_code == 422
    assert fleet.node().rules == {} and len(fleet.node().state.rules) == 0


async def test_a_policy_no_node_could_apply_is_not_deployed(make_fleet):
    fleet = await make_fleet(initial_nodes=2, replace_dead_nodes=False)
    for node_id in ("node-1", "node-2"):
        await fleet.node(node_id).proc.stop()  # no data plane to reload
    policy = {"name": "nowhere", "rules": [{"type": "rate_limit", "value": 5}]}
    response = await fleet.client.post(f"{API}/policy", json=policy)
    assert response.status_code == 503
    message = response.json()["error"]["message"]
    assert "not deployed" in message and "node-1" in message and "node-2" in message
    assert fleet.fleet.policy is None and fleet.fleet.policy_changes == {}  # nothing recorded
    assert fleet.fleet.kept.fleet.get("policy") is None
    assert fleet.node("node-1").settings.rate_limit_rps is None  # each node rolled back its own change


async def test_a_fleet_ban_no_node_could_apply_is_not_kept(make_fleet):
    fleet = await make_fleet(replace_dead_nodes=False)
    await fleet.node().proc.stop()
    response = await fleet.client.post(f"{API}/blacklist", json={"ip": "127.0.0.9", "duration_seconds": 60})
    assert response.status_code == 503 and "not applied" in response.json()["error"]["message"]
    assert fleet.fleet.blacklist == {} and len(fleet.fleet.kept.bans) == 0
    assert fleet.node().blacklist == {}


@pytest.mark.parametrize(
    "path,body",
    [
        (f"{API}/scale", {"action": "scale_up", "count": True}),
        (f"{API}/scale", {"action": "scale_up", "count": 1.0}),
        (f"{API}/scale", {"action": "scale_up", "count": "1"}),
        (f"{API}/blacklist", {"ip": "127.0.0.9", "duration_seconds": True}),
        (f"{NODE}/blacklist", {"ip": "127.0.0.9", "duration_seconds": "60"}),
        (f"{NODE}/blacklist", {"ip": "127.0.0.9", "reason": 5}),
        (f"{NODE}/rules", {"pattern": "x", "action": "block", "severity": True}),
        (f"{API}/policy", {"name": "p", "rules": [{"type": "rate_limit", "value": True}]}),
        (f"{API}/policy", {"name": 7, "rules": [{"type": "rate_limit", "value": 5}]}),
    ],
)
async def test_bodies_are_strictly_typed(fleet, path, body):
    response = await fleet.client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"
    assert len(fleet.fleet.nodes) == 1 and fleet.node().blacklist == {} and fleet.fleet.policy is None
