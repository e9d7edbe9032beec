"""Bans and the allowlist (issue 23): list bans with reason, source and expiry, lift them, allow a
source before every other check; on a node and fleet-wide. The policy in force, and removing its
rate limit. Checked with real traffic through HAProxy from distinct loopback sources."""

from __future__ import annotations

import time
from typing import Any

import pytest

from actors.mitigation.settings import WafSettings
from tests.deployments.mitigation.test_crs_waf import SQLI
from tests.deployments.mitigation.test_kept_state import fetch, get, statuses

NODE = "/nodes/node-1/api/v1"
API = "/api/v1"


async def test_a_nodes_bans_are_listed_with_reason_source_and_expiry_and_can_be_lifted(fleet):
    client, url = fleet.client, fleet.node_url()
    await client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.21", "reason": "abuse", "duration_seconds": 600})
    await client.post(f"{NODE}/blacklist", json={"ip": "127.0.1.0/30", "reason": "range", "duration_seconds": 60})
    await client.post(f"{API}/blacklist", json={"ip": "127.0.0.22", "reason": "fleet", "duration_seconds": 300})
    listed = (await client.get(f"{NODE}/blacklist")).json()
    assert listed["total"] == 3
    assert [(e["ip"], e["reason"], e["source"]) for e in listed["entries"]] == [
        ("127.0.1.0/30", "range", "api"),  # soonest expiry first
        ("127.0.0.22", "fleet", "fleet"),
        ("127.0.0.21", "abuse", "api"),
    ]
    assert all(e["expires_at"].endswith("+00:00") and e["expires"] > 0 for e in listed["entries"])
    assert await get(url + "/", "127.0.0.21") == 0 and await get(url + "/", "127.0.1.1") == 0

    lifted = await client.delete(f"{NODE}/blacklist/127.0.0.21")
    assert lifted.status_code == 200 and (lifted.json()["ip"], lifted.json()["status"]) == ("127.0.0.21", "deleted")
    assert (await client.delete(f"{NODE}/blacklist/127.0.1.0/30")).status_code == 200  # a CIDR in the path
    assert await get(url + "/", "127.0.0.21") == 200 and await get(url + "/", "127.0.1.1") == 200
    assert (await client.delete(f"{NODE}/blacklist/127.0.0.21")).status_code == 404
    assert (await client.delete(f"{NODE}/blacklist/not-an-ip")).status_code == 422
    assert [e["ip"] for e in (await client.get(f"{NODE}/blacklist")).json()["entries"]] == ["127.0.0.22"]
    assert len(fleet.node().state.bans) == 1  # lifted in the record too: a restart does not bring them back


async def test_a_ban_renewed_is_changed_in_place_and_never_leaves_the_map(
    fleet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Banning a banned source again (a fleet resync, a renewed flood ban) changes its expiry with
    `set map`: a `del map` then `add map` would let the source connect between the two."""
    node, url = fleet.node(), fleet.node_url()
    await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.26", "duration_seconds": 60})
    await node.add_blacklist_many([("127.0.0.27", "flood")], 60)
    sent: list[str] = []
    runtime = node._runtime

    async def recorded(command: str, payload: str | None = None, strict: bool = False) -> str:
        sent.append(command)
        return await runtime(command, payload, strict)

    monkeypatch.setattr(node, "_runtime", recorded)
    renewed = await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.26", "duration_seconds": 600})
    assert renewed.status_code == 201
    await node.add_blacklist_many([("127.0.0.27", "flood again"), ("127.0.0.28", "flood")], 600)
    commands = [part.strip() for line in sent for part in line.split(";")]
    assert not [c for c in commands if c.startswith("del map") and c.split()[-1] in ("127.0.0.26", "127.0.0.27")]
    assert [c.split()[0:2] for c in commands if "127.0.0.27" in c] == [["set", "map"]]
    shown = await node.proc.command(f"show map {node.paths.blacklist}")
    for ip in ("127.0.0.26", "127.0.0.27", "127.0.0.28"):
        held = [line.split()[-1] for line in shown.splitlines() if f" {ip} " in line]
        assert held == [str(node.blacklist[ip]["expires"])]  # one entry, the new expiry
        assert node.blacklist[ip]["expires"] > time.time() + 500
        assert await get(url + "/", ip) == 0


async def test_an_allowed_source_skips_bans_limits_and_the_waf_until_removed(fleet):
    client, url = fleet.client, fleet.node_url()
    await client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.23", "duration_seconds": 600})
    assert await get(url + "/", "127.0.0.23") == 0
    added = await client.post(f"{NODE}/allowlist", json={"ip": "127.0.0.23", "reason": "monitoring"})
    assert added.status_code == 201 and added.json()["reason"] == "monitoring"
    assert await get(url + "/", "127.0.0.23") == 200  # the allowlist is checked first
    assert await get(url + "/?q=%3Cscript%3Ealert(1)%3C/script%3E", "127.0.0.23") == 200
    assert await get(url + "/?q=%3Cscript%3Ealert(1)%3C/script%3E", "127.0.0.24") == 403  # others: the WAF
    listed = (await client.get(f"{NODE}/allowlist")).json()
    assert listed["total"] == 1 and listed["entries"][0]["ip"] == "127.0.0.23"
    assert (await client.delete(f"{NODE}/allowlist/127.0.0.23")).status_code == 200
    assert await get(url + "/", "127.0.0.23") == 0  # the ban applies again
    assert (await client.delete(f"{NODE}/allowlist/127.0.0.23")).status_code == 404
    assert (await client.post(f"{NODE}/allowlist", json={"ip": "fe80::1%lo"})).status_code == 422


async def test_fleet_bans_and_the_fleet_allowlist_reach_every_node_and_are_lifted_everywhere(make_fleet):
    fleet = await make_fleet(initial_nodes=2)
    client = fleet.client
    banned = await client.post(f"{API}/blacklist", json={"ip": "127.0.0.25", "reason": "x", "duration_seconds": 600})
    assert banned.status_code == 201 and banned.json()["failed"] == {}
    listed = (await client.get(f"{API}/blacklist")).json()
    assert [(e["ip"], e["source"]) for e in listed["entries"]] == [("127.0.0.25", "fleet")]
    allowed = await client.post(f"{API}/allowlist", json={"ip": "127.0.0.26", "reason": "partner"})
    assert allowed.status_code == 201 and allowed.json()["nodes"] == ["node-1", "node-2"]
    late = (await client.post(f"{API}/scale", json={"action": "scale_up", "count": 1})).json()["nodes"][0]
    for node_id in ("node-1", "node-2", late):
        url = fleet.node_url(node_id)
        assert await get(url + "/", "127.0.0.25") == 0
        assert await get(url + "/?q=%3Cscript%3E", "127.0.0.26") == 200  # allowed before the WAF
    lifted = await client.delete(f"{API}/blacklist/127.0.0.25")
    assert lifted.status_code == 200 and lifted.json()["nodes"] == ["node-1", "node-2", late]
    removed = await client.delete(f"{API}/allowlist/127.0.0.26")
    assert removed.status_code == 200 and removed.json()["failed"] == {}
    for node_id in ("node-1", "node-2", late):
        url = fleet.node_url(node_id)
        assert await get(url + "/", "127.0.0.25") == 200
        assert await get(url + "/?q=%3Cscript%3E", "127.0.0.26") == 403
    assert (await client.get(f"{API}/blacklist")).json()["total"] == 0
    assert (await client.get(f"{API}/allowlist")).json()["total"] == 0
    assert (await client.delete(f"{API}/blacklist/127.0.0.25")).status_code == 404


async def test_the_policy_in_force_is_shown_and_its_rate_limit_can_be_removed(fleet):
    client, url = fleet.client, fleet.node_url()
    empty = (await client.get(f"{API}/policy")).json()
    assert empty == {"policy": None, "policy_by": {}, "rate_limit_rps": None, "blocked_countries": []} | {
        "geo_prefixes": 0,
        "accept_proxy": False,
        "trusted_proxies": [],
        "waf": WafSettings().model_dump(),  # the configured WAF
        "nodes": None,
        "failed": None,
    }
    assert (await client.delete(f"{API}/policy/rate_limit")).status_code == 404
    policy = {"name": "tight", "rules": [{"type": "rate_limit", "value": 4}]}
    assert (await client.post(f"{API}/policy", json=policy)).status_code == 200
    shown = (await client.get(f"{API}/policy")).json()
    assert shown["policy"] == policy and shown["rate_limit_rps"] == 4
    assert 429 in await statuses(url + "/", "127.0.0.27", 12)

    removed = await client.delete(f"{API}/policy/rate_limit")
    assert removed.status_code == 200 and removed.json()["rate_limit_rps"] is None
    assert removed.json()["nodes"] == ["node-1"] and removed.json()["policy"] is None  # nothing left of it
    assert 429 not in await statuses(url + "/", "127.0.0.28", 12)
    assert fleet.node().settings.rate_limit_rps is None
    assert (await client.delete(f"{API}/policy/teleport")).status_code == 422


async def test_the_policy_shown_is_every_kind_in_force_after_policies_of_other_kinds(fleet):
    """A WAF policy, then a rate-limit-only policy: both are in force (SQL injection in a body is
    refused, a flood is limited), so `GET /policy` lists both rules; before, it listed the rate
    limit alone while `waf` showed the CRS in force. Removing each piece leaves the other, then none."""
    client, url = fleet.client, fleet.node_url()
    waf = {"type": "waf", **WafSettings(engine="crs", paranoia_level=2).model_dump()}
    limit = {"type": "rate_limit", "value": 4}
    assert (await client.post(f"{API}/policy", json={"name": "strict", "rules": [waf]})).status_code == 200
    assert (await client.post(f"{API}/policy", json={"name": "tight", "rules": [limit]})).status_code == 200
    shown = (await client.get(f"{API}/policy")).json()
    assert shown["policy"] == {"name": "tight", "rules": [waf, limit]}
    assert shown["policy_by"] == {"waf": "strict", "rate_limit": "tight"}
    assert shown["waf"]["engine"] == "crs" and shown["rate_limit_rps"] == 4
    assert await fetch(url + "/api", "127.0.0.43", "POST", json={"user": SQLI}) == 403
    assert 429 in await statuses(url + "/", "127.0.0.44", 12)

    removed = await client.delete(f"{API}/policy/rate_limit")
    assert removed.status_code == 200, removed.text
    assert removed.json()["policy"] == {"name": "tight", "rules": [waf]}
    assert removed.json()["policy_by"] == {"waf": "strict"}
    assert (await client.get(f"{API}/policy")).json()["policy"] == {"name": "tight", "rules": [waf]}
    assert 429 not in await statuses(url + "/", "127.0.0.45", 12)
    assert await fetch(url + "/api", "127.0.0.46", "POST", json={"user": SQLI}) == 403

    removed = await client.delete(f"{API}/policy/waf")
    assert removed.status_code == 200, removed.text
    assert removed.json()["policy"] is None and removed.json()["policy_by"] == {}
    assert removed.json()["waf"] == WafSettings().model_dump()
    assert await fetch(url + "/api", "127.0.0.47", "POST", json={"user": SQLI}) != 403


async def test_a_thousand_bans_at_once_all_reach_haproxy_and_survive_a_map_replaced_in_one_step(fleet: Any) -> None:
    """A CLI payload longer than HAProxy's buffer is dropped without an error: a flood batch of 1,000
    bans, and the map replaced after a restart, go in payloads that fit (it was committed empty)."""
    node, url = fleet.node(), fleet.node_url()
    sources = [f"127.3.{i // 250}.{1 + i % 250}" for i in range(1000)]
    await node.add_blacklist_many([(ip, "flood") for ip in sources], 600)

    def held() -> set[str]:
        return {line.split()[1] for line in shown.splitlines() if len(line.split()) == 3}

    shown = await node.proc.command(f"show map {node.paths.blacklist}")
    assert held() == set(sources)
    await node.proc.replace_map(node.paths.blacklist, node._map_lines()[node.paths.blacklist])
    shown = await node.proc.command(f"show map {node.paths.blacklist}")
    assert held() == set(sources)
    assert await get(url + "/", sources[-1]) == 0 and await get(url + "/", "127.3.9.9") == 200
