"""The fleet actor's bookkeeping over node handles that are fakes (no HAProxy): envelopes, health,
policy fan-out, scaling choices and threat sums."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from actors.mitigation.fleet import MitigationFleet, NodeEntry
from actors.mitigation.node import NodeError
from actors.mitigation.settings import FleetSettings
from rayfleet.state import LocalActorHandle
from tests.actors.mitigation.durable_store import _own_durable_store  # noqa: F401 - autouse: a store per test
from tests.polling import eventually


class FakeNode:
    """A node actor's surface: records calls, answers heartbeats unless `down`."""

    def __init__(self, load: float = 0.0) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.down = False
        self.load = load
        self.stopped = False

    async def heartbeat(self) -> dict[str, Any]:
        if self.down:
            raise ConnectionError("node gone")
        return {"status": "healthy", "load": self.load}

    async def apply_settings(self, changes: dict[str, Any], geo: Any = None) -> dict[str, Any]:
        self.calls.append(("apply_settings", (changes, geo)))
        return {}

    async def add_rule(self, pattern: str, action: str, severity: str, rule_id: str | None = None) -> dict[str, Any]:
        self.calls.append(("add_rule", (pattern, action, severity, rule_id)))
        return {"id": rule_id}

    async def delete_rule(self, rule_id: str) -> dict[str, Any]:
        raise NodeError(404, f"rule {rule_id} not found")

    async def add_blacklist(self, ip: str, reason: str, duration: int, source: str = "api") -> dict[str, Any]:
        self.calls.append(("add_blacklist", (ip, reason, duration)))
        return {}

    def list_allow(self) -> dict[str, Any]:
        return {"entries": [], "total": 0}

    def list_blacklist(self) -> dict[str, Any]:
        return {"entries": [], "total": 0}

    def threat_summary(self) -> dict[str, Any]:
        return {
            "active_threats": 1,
            "sources": {"10.0.0.1": {"attacks": 3, "type": "waf"}, "10.0.0.2": {"attacks": 0, "type": "waf"}},
            "attack_types": {"waf": 3},
        }

    async def stop(self, forget: bool = False) -> None:
        self.stopped = True


def _fleet(count: int = 2, **settings: Any) -> tuple[MitigationFleet, list[FakeNode]]:
    fleet = MitigationFleet(FleetSettings(initial_nodes=0, **settings), name="fleet-unit")
    fakes = []
    for n in range(1, count + 1):
        fake = FakeNode()
        entry = NodeEntry(f"node-{n}", LocalActorHandle(fake))
        entry.status, entry.mode = "healthy", "l7"
        fleet.nodes[entry.id] = entry
        fakes.append(fake)
    return fleet, fakes


async def test_calls_to_unknown_or_dead_nodes_and_refusals_come_back_as_envelopes():
    fleet, _ = _fleet(1)
    assert await fleet.call_node("node-9", "status") == {"ok": False, "status": 404, "message": "node node-9 not found"}
    assert await fleet.call_node("node-1", "delete_rule", "r1") == {
        "ok": False,
        "status": 404,
        "message": "rule r1 not found",
    }
    assert (await fleet.call_node("node-1", "heartbeat"))["ok"] is True
    fleet.nodes["node-1"].status = "dead"
    assert (await fleet.call_node("node-1", "heartbeat"))["status"] == 503


async def test_a_node_is_dead_after_the_missed_heartbeats_and_recovers_when_it_answers():
    fleet, (_, second) = _fleet(2, dead_after_missed=2, replace_dead_nodes=False)
    second.down = True
    await fleet.check_health()
    assert fleet.nodes["node-2"].status == "healthy" and fleet.nodes["node-2"].missed == 1
    await fleet.check_health()
    assert fleet.nodes["node-2"].status == "dead" and fleet.nodes["node-2"].load == 0.0
    assert fleet.nodes["node-1"].status == "healthy" and fleet.nodes["node-1"].last_heartbeat is not None
    second.down, second.load = False, 0.4
    await fleet.check_health()
    assert fleet.nodes["node-2"].status == "healthy" and fleet.nodes["node-2"].missed == 0
    assert fleet.nodes["node-2"].load == 0.4


async def test_a_rate_limit_policy_reaches_every_live_node_and_later_nodes_inherit_it():
    fleet, (first, second) = _fleet(2)
    fleet.nodes["node-2"].status = "dead"
    result = await fleet.apply_policy({"name": "p", "rules": [{"type": "rate_limit", "value": 30}]})
    assert result["ok"] and result["value"]["nodes"] == ["node-1"]
    assert first.calls == [("apply_settings", ({"rate_limit_rps": 30}, None))]
    assert second.calls == []
    assert fleet.policy_changes == {"rate_limit_rps": 30}  # what _add_node gives new nodes


async def test_geo_block_without_an_asn_api_is_refused_before_any_node_changes():
    fleet, (first,) = _fleet(1)
    result = await fleet.apply_policy({"name": "g", "rules": [{"type": "geo_block", "countries": ["us"]}]})
    assert result == {"ok": False, "status": 409, "message": result["message"]}
    assert "ASN API" in result["message"] and first.calls == []


async def test_fleet_rules_and_blacklist_reach_each_node_and_are_remembered():
    fleet, (first, _) = _fleet(2)
    added = await fleet.add_rule("evil", "block", "high")
    rule_id = added["value"]["id"]
    assert added["value"]["nodes"] == ["node-1", "node-2"]
    assert first.calls[0] == ("add_rule", ("evil", "block", "high", rule_id))
    assert (await fleet.add_rule("(", "block", "high"))["status"] == 422
    bad = await fleet.add_blacklist("not-an-ip", "x", 60)
    assert bad["status"] == 422
    listed = await fleet.add_blacklist("10.0.0.0/8", "abuse", 60)
    assert listed["value"]["ip"] == "10.0.0.0/8"
    assert ("add_blacklist", ("10.0.0.0/8", "abuse", 60)) in first.calls
    assert set(fleet.blacklist) == {"10.0.0.0/8"}
    assert (await fleet.delete_rule("nope"))["status"] == 404
    # a node added later gets the rule and the remaining blacklist time
    late = FakeNode()
    entry = NodeEntry("node-3", LocalActorHandle(late))
    entry.mode = "l7"
    await fleet._bring_up_to_date(entry)
    assert late.calls[0] == ("add_rule", ("evil", "block", "high", rule_id))
    assert late.calls[1][0] == "add_blacklist" and 55 <= late.calls[1][1][2] <= 60


async def test_scale_up_is_bounded_by_max_nodes():
    fleet, _ = _fleet(2, max_nodes=3)
    refused = await fleet.scale("scale_up", 2)
    assert refused == {"ok": False, "status": 409, "message": "max_nodes is 3: room for 1"}


@pytest.mark.parametrize(
    "statuses,loads,drained",
    [
        (["healthy", "dead", "healthy"], [0.1, 0.9, 0.1], ["node-2"]),  # the dead one first
        (["healthy", "healthy", "healthy"], [0.5, 0.1, 0.9], ["node-2"]),  # then the least loaded
        (["healthy", "healthy", "healthy"], [0.2, 0.2, 0.2], ["node-3"]),  # then the newest
    ],
)
async def test_scale_down_drains_dead_then_idle_then_new_nodes(statuses, loads, drained):
    fleet, fakes = _fleet(3)
    for n, entry in enumerate(fleet.nodes.values()):
        entry.status, entry.load = statuses[n], loads[n]
        entry.registered_at = 1000.0 + n
    result = await fleet.scale("scale_down", 1)
    assert result["value"]["nodes"] == drained and result["value"]["total"] == 2
    assert fakes[int(drained[0][-1]) - 1].stopped
    assert (await fleet.scale("scale_down", 5))["status"] == 409


async def test_threats_are_summed_over_the_fleet():
    fleet, _ = _fleet(2)
    summary = await fleet.threats()
    assert summary["active_threats"] == 2 and summary["nodes"] == 2
    assert summary["top_attackers"] == [{"ip": "10.0.0.1", "attacks": 6}]  # sources without attacks left out
    assert summary["attack_types"] == {"syn_flood": 0, "http_flood": 0, "slowloris": 0, "waf": 6}


async def test_a_geo_block_removed_is_handed_on_as_no_prefixes_and_none_ever_leaves_a_nodes_own():
    fleet, _ = _fleet(1)
    assert fleet._share().geo is None  # the fleet never set a geo block: nothing to hand on
    policy = {"name": "g", "rules": [{"type": "geo_block", "countries": ["US"]}]}
    fleet._record_policy(policy, {"blocked_countries": ["US"]}, {"US": ["198.18.0.0/16"]})
    assert fleet._share().geo == {"US": ["198.18.0.0/16"]}
    assert (await fleet.remove_policy("geo_block"))["ok"]
    share = fleet._share()
    assert share.geo == {} and share.changes == {"blocked_countries": []}
    late = FakeNode()  # a node that missed the removal gets it, prefixes emptied
    entry = NodeEntry("node-2", LocalActorHandle(late))
    entry.mode = "l7"
    await fleet._bring_up_to_date(entry)
    assert late.calls == [("apply_settings", ({"blocked_countries": []}, {}))]


class _Direct:
    """A handle that calls its node at once, as Ray does an async actor (no per-call lock)."""

    def __init__(self, node: Any) -> None:
        self.node = node

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.node, name)

        async def remote(*args: Any) -> Any:  # sync methods too, as Ray calls them
            result = method(*args)
            return await result if asyncio.iscoroutine(result) else result

        return type("Remote", (), {"remote": staticmethod(remote)})


class SlowStart(FakeNode):
    """A node whose HAProxy is not up until `go` is set: calls before then are refused (503)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()
        self.running = False

    async def start(self, share: Any = None) -> dict[str, Any]:
        self.calls.append(("start", (share,)))
        await self.go.wait()
        self.running = True
        return {"address": "127.0.0.1:1", "mode": "l7", "adopted": True}

    async def add_blacklist(self, ip: str, reason: str, duration: int, source: str = "api") -> dict[str, Any]:
        if not self.running:
            raise NodeError(503, "HAProxy is not running")
        return await super().add_blacklist(ip, reason, duration, source)


async def test_a_change_a_starting_node_missed_is_brought_in_before_it_is_healthy():
    fleet, (first,) = _fleet(1)
    await fleet.add_blacklist("10.0.0.1", "before", 600)
    slow = SlowStart()
    entry = NodeEntry("node-2", cast(Any, _Direct(slow)))
    fleet.nodes["node-2"] = entry
    starting = asyncio.create_task(fleet._start(entry))
    await eventually(lambda: slow.calls, what="the node asked to start")
    share = slow.calls[0][1][0]
    assert [b["ip"] for b in share.bans] == ["10.0.0.1"]  # what it must hold before it listens
    assert entry.status == "starting"
    added = await fleet.add_blacklist("10.0.0.2", "while it starts", 600)  # it cannot take it yet
    assert added["ok"] and added["value"]["failed"] == {"node-2": "HAProxy is not running"}
    assert ("add_blacklist", ("10.0.0.2", "while it starts", 600)) in first.calls
    slow.go.set()
    await starting
    assert entry.status == "healthy" and "node-2" not in fleet._stale
    assert [c[1][0] for c in slow.calls if c[0] == "add_blacklist"] == ["10.0.0.1", "10.0.0.2"]


class ListedNode(FakeNode):
    """A node that keeps its allowlist and bans with their `source`, and can be unreachable (`down`)."""

    def __init__(self) -> None:
        super().__init__()
        self.allowed: dict[str, dict[str, Any]] = {}
        self.banned: dict[str, dict[str, Any]] = {}

    def _reach(self) -> None:
        if self.down:
            raise ConnectionError("node gone")

    async def add_allow(self, ip: str, reason: str, source: str = "api") -> dict[str, Any]:
        self._reach()
        self.allowed[ip] = {"ip": ip, "reason": reason, "source": source}
        return self.allowed[ip]

    async def add_blacklist(self, ip: str, reason: str, duration: int, source: str = "api") -> dict[str, Any]:
        self._reach()
        self.banned[ip] = {"ip": ip, "reason": reason, "source": source}
        return self.banned[ip]

    async def delete_allow(self, ip: str) -> dict[str, Any]:
        self._reach()
        if self.allowed.pop(ip, None) is None:
            raise NodeError(404, f"{ip} is not allowed on this node")
        return {"ip": ip, "status": "deleted"}

    async def delete_blacklist(self, ip: str) -> dict[str, Any]:
        self._reach()
        if self.banned.pop(ip, None) is None:
            raise NodeError(404, f"{ip} is not banned on this node")
        return {"ip": ip, "status": "deleted"}

    def list_allow(self) -> dict[str, Any]:
        return {"entries": list(self.allowed.values()), "total": len(self.allowed)}

    def list_blacklist(self) -> dict[str, Any]:
        return {"entries": list(self.banned.values()), "total": len(self.banned)}


async def test_what_the_fleet_lifts_while_a_node_does_not_answer_is_lifted_there_once_it_does():
    """An unreachable node misses a lift: it is marked stale and, once it answers, the fleet's own
    entries it still holds are lifted; the node's own (source api) stay."""
    fleet = MitigationFleet(FleetSettings(initial_nodes=0), name="fleet-unit")
    node = ListedNode()
    entry = NodeEntry("node-1", LocalActorHandle(node))
    entry.status, entry.mode = "healthy", "l7"
    fleet.nodes[entry.id] = entry
    assert (await fleet.add_allow("10.0.0.7", "old office"))["ok"]
    assert (await fleet.add_blacklist("10.0.0.8", "flood", 600))["ok"]
    await node.add_allow("10.0.0.9", "this node's monitor")  # the node's own (source api)
    node.down = True
    for lifted in (await fleet.delete_allow("10.0.0.7"), await fleet.delete_blacklist("10.0.0.8")):
        assert lifted["ok"] and "node-1" in lifted["value"]["failed"]
    assert "node-1" in fleet._stale and "10.0.0.7" in node.allowed
    node.down = False
    await fleet.check_health()
    assert "node-1" not in fleet._stale
    assert set(node.allowed) == {"10.0.0.9"} and node.banned == {}
