"""What the fleet deletes while a node is away is no longer enforced there once it is back (issue 23).

Every kind of fleet state (a ban, an allowlist entry, a WAF rule of each map: block, log and score,
a rate-limit, geo-block, WAF, TLS and client-address policy) is deleted by the fleet while node-1 is (a) dead and then
replaced, or (b) alive but unreachable; once node-1 answers again it no longer enforces any of them,
checked in its record, its HAProxy maps and with real traffic, and its own (`source: api`) entries of
the same kinds stay. The fleet cannot make a node forget its own entries, and a fleet message
replayed later does not bring a deleted entry back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from actors.mitigation import fleet as fleet_module
from actors.mitigation.node import NodeError
from actors.mitigation.node_state import NodeState
from rayfleet.state import LocalActorHandle
from tests.deployments.mitigation.conftest import Fleet
from tests.deployments.mitigation.proxy_protocol import proxy_v1, raw_get
from tests.deployments.mitigation.test_crs_waf import SQLI
from tests.deployments.mitigation.test_kept_state import crash, fetch, get, statuses
from tests.doubles.dead_actor import DeadActorHandle
from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"
API = "/api/v1"
GEO = {"DK": ["127.0.0.64/27"]}


async def _geo(url: str, key: str, countries: list[str]) -> dict[str, list[str]]:
    return {c: GEO[c] for c in countries}


async def ok(response: Any, status: int = 201) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


@dataclass(frozen=True)
class Kind:
    """One kind of fleet state: how the fleet puts and deletes it, and how a node is seen to enforce it."""

    name: str
    put: Callable[[Fleet], Awaitable[str]]  # the fleet puts it on every node; returns its key
    delete: Callable[[Fleet, str], Awaitable[Any]]  # the fleet deletes it: the response
    held: Callable[[Any, str], Awaitable[bool]]  # node-1 holds it (memory, record or HAProxy)
    # node-1's data plane at this URL enforces it (None: seen in the maps only, a log or score rule,
    # one critical match scoring 5, under the anomaly threshold)
    enforced: Callable[[str], Awaitable[bool]] | None


async def _put_ban(fleet: Fleet) -> str:
    await ok(await fleet.client.post(f"{API}/blacklist", json={"ip": "127.0.0.21", "duration_seconds": 600}))
    return "127.0.0.21"


async def _put_allow(fleet: Fleet) -> str:
    # node-1 bans the source itself: the fleet's allowlist entry is what lets it through
    await ok(await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.22", "duration_seconds": 600}))
    await ok(await fleet.client.post(f"{API}/allowlist", json={"ip": "127.0.0.22", "reason": "old office"}))
    return "127.0.0.22"


def _put_rule(action: str) -> Callable[[Fleet], Awaitable[str]]:
    async def put(fleet: Fleet) -> str:
        body = {"pattern": f"gone-{action}-[0-9]+", "action": action, "severity": "critical"}
        rule: str = (await ok(await fleet.client.post(f"{API}/rules", json=body)))["id"]
        return rule

    return put


async def _put_policy(fleet: Fleet, rule: dict[str, Any]) -> None:
    await ok(await fleet.client.post(f"{API}/policy", json={"name": rule["type"], "rules": [rule]}), 200)


async def _in_list(node: Any, kind: str, key: str) -> bool:
    memory, durable, path = (
        (node.blacklist, node.state.bans, node.paths.blacklist)
        if kind == "bans"
        else (node.allowlist, node.state.allow, node.paths.allow)
    )
    shown = await node.proc.command(f"show map {path}")
    return key in memory or key in durable or f"{key} " in shown


async def _rule_held(node: Any, rule_id: str) -> bool:
    shown = "".join([await node.proc.command(f"show map {node.paths.waf(k)}") for k in ("block", "log", "critical")])
    return rule_id in node.rules or rule_id in node.state.rules or rule_id in shown


async def _deleted(fleet: Fleet, path: str) -> Any:
    return await fleet.client.delete(f"{API}/{path}")


KINDS = [
    Kind(
        "ban",
        _put_ban,
        lambda fleet, key: _deleted(fleet, f"blacklist/{key}"),
        lambda node, key: _in_list(node, "bans", key),
        lambda url: _is(get(url + "/", "127.0.0.21"), 0),
    ),
    Kind(
        "allowlist entry",
        _put_allow,
        lambda fleet, key: _deleted(fleet, f"allowlist/{key}"),
        lambda node, key: _in_list(node, "allow", key),
        lambda url: _is(get(url + "/", "127.0.0.22"), 200),
    ),
    *[
        Kind(
            f"{action} rule",
            _put_rule(action),
            lambda fleet, key: _deleted(fleet, f"rules/{key}"),
            _rule_held,
            (lambda url: _is(get(url + "/?q=gone-block-1", "127.0.0.4"), 403)) if action == "block" else None,
        )
        for action in ("block", "log", "score")
    ],
    Kind(
        "rate limit",
        lambda fleet: _put_policy(fleet, {"type": "rate_limit", "value": 7}),
        lambda fleet, key: _deleted(fleet, "policy/rate_limit"),
        lambda node, key: _is_now(node.settings.rate_limit_rps is not None),
        lambda url: _limited(url),
    ),
    Kind(
        "geo block",
        lambda fleet: _put_policy(fleet, {"type": "geo_block", "countries": ["DK"]}),
        lambda fleet, key: _deleted(fleet, "policy/geo_block"),
        lambda node, key: _is_now(bool(node.geo_prefixes) or "127.0.0.64" in node.paths.geo.read_text()),
        lambda url: _is(get(url + "/", "127.0.0.70"), 0),
    ),
    Kind(  # the configured WAF is HAProxy's rules, which never read a body; the policy's CRS tier does
        "waf policy",
        lambda fleet: _put_policy(fleet, {"type": "waf", "engine": "crs", "paranoia_level": 2}),
        lambda fleet, key: _deleted(fleet, "policy/waf"),
        lambda node, key: _is_now(_runs_crs(node)),
        lambda url: _is(fetch(url + "/api", "127.0.0.9", "POST", json={"user": SQLI}), 403),
    ),
    Kind(
        "tls policy",
        lambda fleet: _put_policy(fleet, {"type": "tls", "tls": {"demo": True}, "origin_tls": None}),
        lambda fleet, key: _deleted(fleet, "policy/tls"),
        lambda node, key: _is_now(node.settings.tls is not None or " ssl crt " in node.paths.config.read_text()),
        lambda url: _is(fetch(url.replace("http://", "https://") + "/", "127.0.0.11", verify=False), 200),
    ),
    Kind(  # a PROXY header is believed only with accept_proxy: otherwise it is not HTTP (400)
        "client address policy",
        lambda fleet: _put_policy(fleet, {"type": "client_address", "accept_proxy": True}),
        lambda fleet, key: _deleted(fleet, "policy/client_address"),
        lambda node, key: _is_now(node.settings.accept_proxy or "accept-proxy" in node.paths.config.read_text()),
        lambda url: _is(raw_get(url.removeprefix("http://"), "127.0.0.12", proxy_v1("127.0.0.13")), 200),
    ),
]


def _runs_crs(node: Any) -> bool:
    """node-1 holds a CRS WAF: in its settings, its record or a running inspection tier."""
    recorded = (node.state.policy.get("changes") or {}).get("waf") or {}
    return node.settings.crs or recorded.get("engine") == "crs" or node.inspection.tier is not None


async def _is(value: Awaitable[int], expected: int) -> bool:
    return await value == expected


async def _is_now(value: bool) -> bool:
    return value


async def _limited(url: str) -> bool:
    return 429 in await statuses(url + "/", "127.0.0.6", 12)


async def node_holds_its_own(fleet: Fleet) -> str:
    """node-1's own ban, allowlist entry and rule (source api); returns the rule's id."""
    client = fleet.client
    await ok(await client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.31", "duration_seconds": 600}))
    for path, body in (
        ("blacklist", {"ip": "127.0.0.32", "duration_seconds": 600}),
        ("allowlist", {"ip": "127.0.0.32"}),
    ):
        await ok(await client.post(f"{NODE}/{path}", json=body))
    rule: str = (await ok(await client.post(f"{NODE}/rules", json={"pattern": "own-evil", "action": "block"})))["id"]
    return rule


async def assert_own_kept(fleet: Fleet, rule: str) -> None:
    node, url = fleet.node(), fleet.node_url()
    assert node.blacklist["127.0.0.31"]["source"] == "api" and await get(url + "/", "127.0.0.31") == 0
    assert node.allowlist["127.0.0.32"]["source"] == "api" and await get(url + "/", "127.0.0.32") == 200
    assert node.rules[rule].source == "api" and await get(url + "/?q=own-evil", "127.0.0.4") == 403


async def away(fleet: Fleet, how: str) -> Callable[[], Awaitable[None]]:
    """Take node-1 away (`replaced`: its actor killed; `unreachable`: calls to it fail while it runs on;
    `dead and back`: unreachable long enough to be declared dead); returns how it comes back."""
    entry = fleet.fleet.nodes["node-1"]
    reachable = entry.handle
    if how == "replaced":
        await crash(fleet)
    else:
        if how == "unreachable":  # back before it is declared dead: stale from the calls it missed
            fleet.fleet.settings = fleet.fleet.settings.model_copy(update={"dead_after_missed": 10_000})
        entry.handle = DeadActorHandle("unreachable")
    if how != "unreachable":
        await eventually(lambda: entry.status == "dead", timeout=10, what="node-1 declared dead")

    async def back() -> None:
        if how == "replaced":
            fleet.fleet.settings = fleet.fleet.settings.model_copy(update={"replace_dead_nodes": True})
        else:
            entry.handle = reachable
        await eventually(
            lambda: isinstance(entry.handle, LocalActorHandle) and entry.status == "healthy" and not fleet.fleet._stale,
            timeout=20,
            what=f"node-1 back ({how})",
        )
        assert (fleet.node() is reachable.instance) == (how != "replaced")

    return back


@pytest.fixture
async def geo_fleet(make_fleet: Any, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    monkeypatch.setattr(fleet_module, "fetch_prefixes", _geo)
    fleet: Fleet = await make_fleet(initial_nodes=2, replace_dead_nodes=False)
    return fleet


@pytest.mark.parametrize("how", ["replaced", "unreachable", "dead and back"])
@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
async def test_what_the_fleet_deleted_while_a_node_was_away_is_not_enforced_once_it_is_back(
    geo_fleet: Fleet, kind: Kind, how: str
) -> None:
    own_rule = await node_holds_its_own(geo_fleet)
    key = await kind.put(geo_fleet)
    assert await kind.held(geo_fleet.node(), key), "node-1 holds it"
    if kind.enforced is not None:
        assert await kind.enforced(geo_fleet.node_url()), "node-1 enforces it"
    back = await away(geo_fleet, how)
    deleted = await kind.delete(geo_fleet, key)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["nodes"] == ["node-2"]  # node-1 was away
    await back()
    assert not await kind.held(geo_fleet.node(), key), f"node-1 no longer holds the {kind.name}"
    if kind.enforced is not None:
        assert not await kind.enforced(geo_fleet.node_url()), f"node-1 no longer enforces the {kind.name}"
    await assert_own_kept(geo_fleet, own_rule)


async def test_the_fleet_cannot_make_a_node_forget_its_own_entries(fleet: Fleet):
    """A node's own ban and allowlist entry on a source the fleet then bans and allows too stay the
    node's after the fleet lifts its own: the fleet's entry does not take the node's over."""
    client, node = fleet.client, fleet.node()
    await ok(await client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.41", "duration_seconds": 600}))
    await ok(await client.post(f"{NODE}/allowlist", json={"ip": "127.0.0.42", "reason": "monitor"}))
    own_expiry = node.blacklist["127.0.0.41"]["expires"]
    await ok(await client.post(f"{API}/blacklist", json={"ip": "127.0.0.41", "duration_seconds": 3600}))
    await ok(await client.post(f"{API}/allowlist", json={"ip": "127.0.0.42", "reason": "fleet"}))
    assert node.blacklist["127.0.0.41"]["expires"] > own_expiry  # the fleet's longer ban is enforced
    assert node.blacklist["127.0.0.41"]["source"] == node.allowlist["127.0.0.42"]["source"] == "api"
    await ok(await client.delete(f"{API}/blacklist/127.0.0.41"), 200)
    await ok(await client.delete(f"{API}/allowlist/127.0.0.42"), 200)
    assert node.blacklist["127.0.0.41"]["expires"] == own_expiry and node.blacklist["127.0.0.41"]["source"] == "api"
    assert node.allowlist["127.0.0.42"]["source"] == "api"
    assert f"127.0.0.41 {own_expiry}" in await node.proc.command(f"show map {node.paths.blacklist}")
    assert await get(fleet.node_url() + "/", "127.0.0.41") == 0
    # nor by a share that leaves them out: only what came from the fleet is dropped
    await node.sync_share(fleet.fleet._share())
    assert "127.0.0.41" in node.blacklist and "127.0.0.42" in node.allowlist


async def test_a_fleet_message_replayed_later_does_not_bring_a_deleted_entry_back(fleet: Fleet):
    client, node = fleet.client, fleet.node()
    await ok(await client.post(f"{API}/blacklist", json={"ip": "127.0.0.51", "duration_seconds": 600}))
    rule = await ok(await client.post(f"{API}/rules", json={"pattern": "replayed-[0-9]+", "action": "block"}))
    old_share, old_generation = fleet.fleet._share(), fleet.fleet.generation
    await ok(await client.delete(f"{API}/blacklist/127.0.0.51"), 200)
    await ok(await client.delete(f"{API}/rules/{rule['id']}"), 200)
    replays = (
        node.sync_share(old_share),
        node.add_blacklist("127.0.0.51", "replayed", 600, "fleet", old_generation),
        node.add_rule("replayed-[0-9]+", "block", "high", rule["id"], "fleet", old_generation),
    )
    for replay in replays:
        with pytest.raises(NodeError) as refused:
            await replay
        assert refused.value.status == 409 and "generation" in refused.value.message
    assert "127.0.0.51" not in node.blacklist and rule["id"] not in node.rules
    assert await get(fleet.node_url() + "/", "127.0.0.51") == 200
    assert await get(fleet.node_url() + "/?q=replayed-1", "127.0.0.4") == 200


async def test_allowlist_entries_kept_from_before_they_said_their_source_are_migrated_and_pruned(fleet: Fleet):
    """A replaced node whose record holds allowlist entries without `source` (kept before entries
    said who added them) makes each the fleet's if the fleet holds it, else its own; the fleet's are
    then dropped when the fleet lifts them, its own stay."""
    client = fleet.client
    await ok(await client.post(f"{API}/allowlist", json={"ip": "127.0.0.62", "reason": "office"}))
    prefix = fleet.node().state.prefix
    await crash(fleet)
    kept = NodeState(prefix)  # what an older node left: no source, no schema
    for ip in ("127.0.0.62", "127.0.0.63"):
        kept.allow.set(ip, {"ip": ip, "reason": "old", "created_at": "2026-01-01T00:00:00+00:00"})
    kept.policy.delete("schema")
    entry = fleet.fleet.nodes["node-1"]
    await eventually(
        lambda: isinstance(entry.handle, LocalActorHandle) and entry.status == "healthy",
        timeout=20,
        what="node-1 replaced",
    )
    node = fleet.node()
    assert node.allowlist["127.0.0.62"]["source"] == "fleet" and node.allowlist["127.0.0.63"]["source"] == "api"
    assert node.state.policy.get("schema") == 2
    await ok(await client.delete(f"{API}/allowlist/127.0.0.62"), 200)
    assert set(node.allowlist) == {"127.0.0.63"}
    assert "127.0.0.62" not in await node.proc.command(f"show map {node.paths.allow}")
