"""State that survives (issue 23): a node actor that dies is replaced by one that replays its rules,
bans and policy into a new HAProxy on the same address; a restarted fleet brings back its nodes,
policy, rules and bans. Checked with real traffic through HAProxy from distinct loopback sources."""

from __future__ import annotations

import os
import signal
from typing import Any

import httpx
import pytest

from actors.mitigation.fleet import MitigationFleet
from actors.mitigation.haproxy_process import HAProxyProcess
from rayfleet.state import LocalActorHandle
from tests.deployments.mitigation.conftest import Fleet
from tests.doubles.dead_actor import DeadActorHandle
from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"
API = "/api/v1"


async def crash(fleet: Fleet, node_id: str = "node-1") -> int:
    """Kill a node actor: its loops end, PR_SET_PDEATHSIG takes its HAProxy (master and workers)
    and its CRS tier's nginx, and every later call on its handle fails. Returns the dead HAProxy
    master's pid."""
    node = fleet.node(node_id)
    pids = node.proc.process_ids()
    await node.proc.supervised.detach()  # its supervisor was a task of the dead process
    if node.inspection.tier is not None:
        await node.inspection.tier.supervised.detach()
        node.inspection.kill()  # nginx's whole process group
    await node.tasks.stop()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    if node._log_transport is not None:
        node._log_transport.close()
    fleet.fleet.nodes[node_id].handle = DeadActorHandle(f"{fleet.fleet.name}-{node_id}")
    return pids[0]


async def get(url: str, source: str, keepalive: bool = False) -> int:
    """The status of GET `url` from the loopback address `source` (0: the connection was refused)."""
    return await fetch(url, source)


async def fetch(url: str, source: str, method: str = "GET", verify: bool = True, **request: Any) -> int:
    """The status of `method` `url` from the loopback address `source` (0: the connection was
    refused, or the TLS handshake failed); `request`: httpx's (`json=`, ...)."""
    transport = httpx.AsyncHTTPTransport(local_address=source, verify=verify)
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=5.0) as client:
        try:
            return (await client.request(method, url, **request)).status_code
        except httpx.TransportError:
            return 0


async def statuses(url: str, source: str, count: int) -> list[int]:
    """`count` requests on one keep-alive connection from `source`."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=5.0) as client:
        return [(await client.get(url)).status_code for _ in range(count)]


async def protect(fleet: Fleet) -> dict[str, Any]:
    """A rule, node and fleet bans (one about to expire) and a rate-limit policy."""
    client = fleet.client
    rule = await client.post(f"{NODE}/rules", json={"pattern": "kept-evil-[0-9]+", "action": "block"})
    assert rule.status_code == 201
    for ip, seconds in (("127.0.0.2", 600), ("127.0.0.3", 1)):
        response = await client.post(
            f"{NODE}/blacklist", json={"ip": ip, "reason": "kept", "duration_seconds": seconds}
        )
        assert response.status_code == 201
    assert (await client.post(f"{API}/blacklist", json={"ip": "127.0.0.5", "duration_seconds": 600})).status_code == 201
    assert (
        await client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.10", "duration_seconds": 600})
    ).status_code == 201
    assert (await client.post(f"{NODE}/allowlist", json={"ip": "127.0.0.10", "reason": "kept"})).status_code == 201
    policy = {"name": "kept", "rules": [{"type": "rate_limit", "value": 7}]}
    assert (await client.post(f"{API}/policy", json=policy)).status_code == 200
    return {"rule": rule.json()["id"], "policy": policy}


async def assert_enforced(url: str) -> None:
    assert await get(url + "/", "127.0.0.2") == 0  # node ban: refused at connection time
    assert await get(url + "/", "127.0.0.5") == 0  # fleet ban
    assert await get(url + "/?q=kept-evil-42", "127.0.0.4") == 403  # the rule
    assert await get(url + "/", "127.0.0.4") == 200
    assert await get(url + "/", "127.0.0.3") == 200  # the expired ban was not brought back
    assert await get(url + "/", "127.0.0.10") == 200  # allowed: the allowlist still comes first
    assert 429 in await statuses(url + "/", "127.0.0.6", 20)  # the policy's rate limit


async def test_a_killed_node_actor_is_replaced_with_its_rules_bans_and_policy(fleet):
    kept = await protect(fleet)
    old = fleet.node()
    address = old.address
    dead_master = await crash(fleet)

    def replaced() -> bool:
        entry = fleet.fleet.nodes["node-1"]
        return isinstance(entry.handle, LocalActorHandle) and entry.status == "healthy"

    await eventually(replaced, timeout=20, what="the dead node replaced by the fleet's health check")
    node = fleet.node()
    assert node is not old  # a new actor, which knew nothing but what it replayed
    assert node.proc.pid != dead_master and node.address == address  # a new HAProxy, the same address
    await eventually(lambda: "127.0.0.3" not in node.blacklist, timeout=5, what="the short ban expired")
    await assert_enforced(f"http://{address}")
    assert "127.0.0.3" not in node.paths.blacklist.read_text()
    listed = (await fleet.client.get(f"{NODE}/rules")).json()
    assert [r["id"] for r in listed["rules"]] == [kept["rule"]]
    assert node.settings.rate_limit_rps == 7


async def test_a_replaced_node_listens_only_once_it_holds_what_the_fleet_changed_while_it_was_dead(
    make_fleet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replacement's HAProxy starts with the fleet's bans, allowlist, rules and policy already in
    its maps and configuration: none of them arrives later through the runtime API, so no banned
    source is ever served by it. What HAProxy holds is read the moment its start returns, before the
    node or the fleet could send it any runtime change: what it started listening with."""
    fleet = await make_fleet(initial_nodes=2, replace_dead_nodes=False)
    client = fleet.client
    before = {"name": "before", "rules": [{"type": "rate_limit", "value": 5}]}
    assert (await client.post(f"{API}/policy", json=before)).status_code == 200
    lifted = await client.post(f"{API}/blacklist", json={"ip": "127.0.0.12", "duration_seconds": 600})
    assert lifted.json()["nodes"] == ["node-1", "node-2"]
    trusted = await client.post(f"{API}/allowlist", json={"ip": "127.0.0.13", "reason": "old office"})
    assert trusted.json()["nodes"] == ["node-1", "node-2"]
    own = await client.post(f"{NODE}/allowlist", json={"ip": "127.0.0.14", "reason": "this node's monitor"})
    assert own.status_code == 201 and own.json()["source"] == "api"
    address = fleet.node().address  # the replacement listens on the same one
    await crash(fleet)
    # while node-1 is dead, node-2 alone takes these
    assert (await client.post(f"{API}/blacklist", json={"ip": "127.0.0.9", "duration_seconds": 600})).status_code == 201
    assert (await client.delete(f"{API}/blacklist/127.0.0.12")).status_code == 200
    assert (await client.post(f"{API}/allowlist", json={"ip": "127.0.0.11", "reason": "office"})).status_code == 201
    assert (await client.delete(f"{API}/allowlist/127.0.0.13")).status_code == 200  # no longer trusted
    rule = await client.post(f"{API}/rules", json={"pattern": "fleet-evil-[0-9]+", "action": "block"})
    assert rule.status_code == 201
    after = {"name": "after", "rules": [{"type": "rate_limit", "value": 7}]}
    assert (await client.post(f"{API}/policy", json=after)).status_code == 200

    first: dict[str, Any] = {}
    start = HAProxyProcess.start

    async def start_and_look(proc: HAProxyProcess) -> None:
        await start(proc)
        paths = proc.paths
        first["blacklist"] = await proc.command(f"show map {paths.blacklist}")
        first["allow"] = await proc.command(f"show map {paths.allow}")
        first["waf"] = "".join([await proc.command(f"show map {paths.waf(k)}") for k in ("block", "log")])
        first["config"] = paths.config.read_text()
        url = f"http://{address}/"
        first["banned"] = await get(url, "127.0.0.9")
        first["lifted"] = await get(url, "127.0.0.12")
        first["rule"] = await get(url + "?q=fleet-evil-1", "127.0.0.4")
        first["status in the fleet"] = fleet.fleet.nodes["node-1"].status

    monkeypatch.setattr(HAProxyProcess, "start", start_and_look)
    fleet.fleet.settings = fleet.fleet.settings.model_copy(update={"replace_dead_nodes": True})
    await eventually(
        lambda: fleet.fleet.nodes["node-1"].status == "healthy" and "banned" in first,
        timeout=20,
        what="node-1 replaced",
    )
    assert "127.0.0.9 " in first["blacklist"] and "127.0.0.12 " not in first["blacklist"]
    assert "127.0.0.11 1" in first["allow"] and "127.0.0.14 1" in first["allow"]
    assert "127.0.0.13 " not in first["allow"]  # the fleet stopped trusting it while node-1 was dead
    assert rule.json()["id"] in first["waf"]
    assert "sc_http_req_rate(0) gt 7 " in first["config"]
    assert (first["banned"], first["lifted"], first["rule"]) == (0, 200, 403)
    assert first["status in the fleet"] != "healthy"  # not given traffic or changes as a live node yet
    node = fleet.node()
    assert node.settings.rate_limit_rps == 7 and node.blacklist["127.0.0.9"]["source"] == "fleet"
    assert "127.0.0.12" not in node.blacklist and "127.0.0.12" not in node.state.bans
    assert "127.0.0.13" not in node.allowlist and "127.0.0.13" not in node.state.allow
    assert node.allowlist["127.0.0.11"]["source"] == "fleet" and node.allowlist["127.0.0.14"]["source"] == "api"


async def test_a_restarted_fleet_brings_back_its_nodes_policy_rules_and_bans(make_fleet):
    fleet = await make_fleet()
    kept = await protect(fleet)
    fleet_rule = (await fleet.client.post(f"{API}/rules", json={"pattern": "fleet-evil", "action": "block"})).json()
    settings, name = fleet.fleet.settings, fleet.fleet.name
    await fleet.fleet.shutdown()  # every actor gone (a head restart): nothing in memory is left

    again = MitigationFleet(settings, name=name)
    try:
        assert await again.ensure_started() == 1
        assert again.policy == kept["policy"] and again.policy_changes == {"rate_limit_rps": 7}
        assert set(again.rules) == {fleet_rule["id"]} and set(again.blacklist) == {"127.0.0.5"}
        url = f"http://{again.nodes['node-1'].address}"
        await eventually(lambda: "127.0.0.3" not in again.nodes["node-1"].handle.instance.blacklist, timeout=5)
        await assert_enforced(url)
        assert await get(url + "/?x=fleet-evil", "127.0.0.4") == 403
    finally:
        await again.shutdown()


async def test_a_node_scaled_down_is_forgotten(make_fleet):
    fleet = await make_fleet(initial_nodes=2)
    await fleet.client.post("/nodes/node-2/api/v1/blacklist", json={"ip": "127.0.0.7", "duration_seconds": 600})
    scaled = await fleet.client.post(f"{API}/scale", json={"action": "scale_down", "count": 1})
    assert scaled.json()["nodes"] == ["node-2"]
    settings, name = fleet.fleet.settings, fleet.fleet.name
    await fleet.fleet.shutdown()
    again = MitigationFleet(settings, name=name)
    try:
        assert await again.ensure_started() == 1 and list(again.nodes) == ["node-1"]
        added = await again.scale("scale_up", 1)  # a new node gets a new id and none of node-2's bans
        node = again.nodes[added["value"]["nodes"][0]].handle.instance
        assert node.node_id == "node-3" and node.blacklist == {}
    finally:
        await again.shutdown()


async def test_a_replica_brings_a_fleet_actor_that_ray_restarted_back_with_its_nodes(make_fleet):
    """Found by the chaos run: a replica asked the fleet to start once, so after Ray restarted the
    fleet actor (same handle, new instance, nothing started) node-1 answered 404 for good."""
    fleet = await make_fleet()
    await fleet.client.post("/nodes/node-1/api/v1/blacklist", json={"ip": "127.0.0.8", "duration_seconds": 600})
    settings, name = fleet.fleet.settings, fleet.fleet.name
    await fleet.fleet.shutdown()
    fleet.fleet = fleet.handle._instance = MitigationFleet(settings, name=name)  # what a Ray restart leaves
    listed = await fleet.client.get("/nodes/node-1/api/v1/blacklist")
    assert listed.status_code == 200, listed.text
    assert "127.0.0.8" in {ban["ip"] for ban in listed.json()["entries"]}
