"""Per-group DNS on a real network: a client in a network namespace inside a group's network
(198.18.5.0/24) and one in another network ask our resolver (the host's end of their veth pairs) for the
same names; the group's client is answered by the group's own dnsmasq (steered by the web filter's nft
table), the other by the global one, which forwards to an upstream dnsmasq in a third namespace. Everything
the test sends goes to addresses it created; the namespaces are removed at the end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from deployments.webfilter.config import ProxyConfig
from tests.deployments.webfilter.conftest import HOSTS, running_service, state_folder
from tests.deployments.webfilter.netns import Side, add_address, lan_resolve, namespace, upstream_resolver
from tests.polling import eventually

pytestmark = [
    pytest.mark.realserver,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and nft need root"),
]

RECORDS = {
    "games.grp.test": "127.0.0.1",
    "ads.grp.test": "127.0.0.1",
    "ok.ads.grp.test": "127.0.0.1",
    "more.grp.test": "127.0.0.1",
    "school.grp.test": "127.0.0.1",
}
DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
KIDS = {"name": "kids", "networks": ["198.18.5.0/24"], "blacklist": ["games.grp.test"], "whitelist": []}


async def _two(rows: Any) -> list[dict[str, Any]] | None:
    found = await rows
    return found if len(found) == 2 else None


def nft_tables() -> str:
    return subprocess.run(["nft", "list", "tables"], capture_output=True, text=True, check=True, timeout=10).stdout


async def status(wf: Any) -> dict[str, Any]:
    return dict(await wf.app.state.component.proxy.status.remote())


async def dns_rows(wf: Any, name: str) -> list[dict[str, Any]]:
    r = await wf.api.get("/api/dns/logs", params={"search": name, "limit": 50})
    assert r.status_code == 200, r.text
    return [row for row in r.json()["data"] if row["name"] == name]


@contextlib.asynccontextmanager
async def two_networks(wf: Any) -> AsyncIterator[tuple[Side, Side, list[int]]]:
    """A client in the group's network (198.18.5.0/24) and one in another network, both using our resolver,
    which forwards to an upstream dnsmasq in a third namespace. The groups whose ids the test appends to the
    list are deleted at the end, the global blacklist emptied and the DNS settings put back."""
    k = random.randint(6, 250)
    with (
        namespace("kid", "198.18.5") as kid,
        namespace("oth", f"198.18.{k}") as other,
        namespace("up", f"198.19.{k}") as up,
    ):
        async with upstream_resolver(up, RECORDS):
            r = await wf.api.post(
                "/api/settings", json={"dns_listen": [kid.host, other.host], "dns_upstreams": [up.peer]}
            )
            assert r.status_code == 200, r.text
            groups: list[int] = []
            try:
                yield kid, other, groups
            finally:
                for group_id in groups:
                    await wf.api.delete(f"/api/groups/{group_id}")
                assert (await wf.api.delete("/api/domain-blacklist/clear-all")).status_code == 200
                r = await wf.api.post("/api/settings", json={"dns_listen": [], "dns_upstreams": []})
                assert r.status_code == 200, r.text
            assert (await status(wf))["dns_views"] == [] and (await status(wf))["nft_table"] is None


async def test_the_same_name_is_sinkholed_for_the_group_and_resolved_for_another_network(wf):
    async with two_networks(wf) as (kid, other, groups):
        # before any group: both networks get the upstream's answer
        assert await lan_resolve(kid, kid.host, "games.grp.test") == ["127.0.0.1"]
        created = await wf.api.post("/api/groups", json={**KIDS, "whitelist": ["ok.ads.grp.test"]})
        assert created.status_code == 200, created.text
        group_id = created.json()["data"]["id"]
        groups.append(group_id)
        (view,) = (await status(wf))["dns_views"]
        assert view["group"] == "kids" and view["running"] and not view["outside"]
        assert f"table inet {(await status(wf))['nft_table'].split()[1]}" in nft_tables()
        # the group's name: sinkholed for the group's client, resolved for the other network
        assert await lan_resolve(kid, kid.host, "games.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(kid, kid.host, "x.games.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(other, other.host, "games.grp.test") == ["127.0.0.1"]
        # the global blacklist holds for both; the group's whitelist wins for the group only
        assert (await wf.api.post("/api/domain-blacklist", json={"domain": "ads.grp.test"})).status_code == 200
        assert await lan_resolve(kid, kid.host, "ads.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(other, other.host, "ads.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(kid, kid.host, "ok.ads.grp.test") == ["127.0.0.1"]
        assert await lan_resolve(other, other.host, "ok.ads.grp.test") == ["0.0.0.0"]
        # a group edit applies before the call returns
        edited = {**KIDS, "blacklist": ["games.grp.test", "more.grp.test"], "whitelist": ["ok.ads.grp.test"]}
        assert (await wf.api.put(f"/api/groups/{group_id}", json=edited)).status_code == 200
        assert await lan_resolve(kid, kid.host, "more.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(other, other.host, "more.grp.test") == ["127.0.0.1"]
        # the query log names the group whose view answered (and the rule that decided it)
        rows = await eventually(lambda: _two(dns_rows(wf, "more.grp.test")), what="the two queries' rows")
        by_client = {row["client_ip"]: row for row in rows}
        kid_row, other_row = by_client[kid.peer], by_client[other.peer]
        assert (kid_row["group"], kid_row["outcome"]) == ("kids", "sinkholed")
        assert (kid_row["rule"], kid_row["source"]) == ("more.grp.test", "group:kids")
        assert (other_row["group"], other_row["outcome"], other_row["blocked"]) == (None, "forwarded", False)
        # a global rule that blocked a group's client is credited to the global list
        (ads,) = [r for r in await dns_rows(wf, "ads.grp.test") if r["client_ip"] == kid.peer]
        assert (ads["group"], ads["rule"], ads["source"]) == ("kids", "ads.grp.test", "domain-blacklist")


async def test_names_added_to_a_blacklist_reach_a_running_view_without_a_restart(wf):
    """Base + delta for a group's view too: a name added to the global or the group's blacklist is read by the
    running view on SIGHUP (same pid, answering throughout) and sinkholed for the group's client when the call
    returns; a removal starts the view on a new base."""
    async with two_networks(wf) as (kid, other, groups):
        base = {**KIDS, "blacklist": ["games.grp.test", "school.grp.test"]}
        created = await wf.api.post("/api/groups", json=base)
        assert created.status_code == 200, created.text
        group_id = created.json()["data"]["id"]
        groups.append(group_id)
        (view,) = (await status(wf))["dns_views"]
        assert await lan_resolve(kid, kid.host, "ads.grp.test") == ["127.0.0.1"]
        # the global blacklist: a plain name added
        assert (await wf.api.post("/api/domain-blacklist", json={"domain": "ads.grp.test"})).status_code == 200
        assert await lan_resolve(kid, kid.host, "ads.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(kid, kid.host, "x.ads.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(other, other.host, "ads.grp.test") == ["0.0.0.0"]
        # the group's own blacklist: a plain name added
        edited = {**base, "blacklist": ["games.grp.test", "school.grp.test", "more.grp.test"]}
        assert (await wf.api.put(f"/api/groups/{group_id}", json=edited)).status_code == 200
        assert await lan_resolve(kid, kid.host, "more.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(other, other.host, "more.grp.test") == ["127.0.0.1"]
        # a name added since the view's start taken out again: only the delta shrinks
        assert (await wf.api.put(f"/api/groups/{group_id}", json=base)).status_code == 200
        assert await lan_resolve(kid, kid.host, "more.grp.test") == ["127.0.0.1"]
        (same,) = (await status(wf))["dns_views"]
        assert same["pid"] == view["pid"] and same["port"] == view["port"], (view, same)
        # a name of the view's base taken out: a new base, so the view restarts, on the names that still hold
        assert (
            await wf.api.put(f"/api/groups/{group_id}", json={**base, "blacklist": ["school.grp.test"]})
        ).status_code == 200
        assert await lan_resolve(kid, kid.host, "games.grp.test") == ["127.0.0.1"]
        assert await lan_resolve(kid, kid.host, "school.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(kid, kid.host, "ads.grp.test") == ["0.0.0.0"]  # the global name still holds
        (restarted,) = (await status(wf))["dns_views"]
        assert restarted["pid"] != view["pid"] and restarted["running"]


async def test_a_killed_group_dnsmasq_is_supervised_back(wf):
    with namespace("kid", "198.18.5") as kid:
        assert (await wf.api.post("/api/settings", json={"dns_listen": [kid.host]})).status_code == 200
        created = await wf.api.post("/api/groups", json=KIDS)
        assert created.status_code == 200, created.text
        try:
            assert await lan_resolve(kid, kid.host, "games.grp.test") == ["0.0.0.0"]
            (view,) = (await status(wf))["dns_views"]
            os.kill(view["pid"], signal.SIGKILL)

            async def back() -> dict[str, Any] | None:
                (now,) = (await status(wf))["dns_views"]
                return now if now["running"] and now["pid"] != view["pid"] else None

            again = await eventually(back, timeout=10, what="the group's dnsmasq restarted")
            assert again["port"] == view["port"]
            assert await lan_resolve(kid, kid.host, "games.grp.test") == ["0.0.0.0"]
            restarts = {c["name"]: c["restarts"] for c in (await status(wf))["children"]}
            assert restarts["dnsmasq-group-kids"] >= 1
        finally:
            await wf.api.delete(f"/api/groups/{created.json()['data']['id']}")
            assert (await wf.api.post("/api/settings", json={"dns_listen": []})).status_code == 200


async def test_attackers_cannot_reach_a_view_directly_nor_claim_or_shed_a_group_address(wf):
    await attackers_get_nothing(wf, lambda kid, other: [kid.host, other.host])


async def attackers_get_nothing(wf: Any, listen: Callable[[Side, Side], list[str]]) -> None:
    """With our resolver on `listen(kid, other)` and the group kids: asking a view's port directly, claiming
    a group address from another network and shedding the group with another network's address get nothing."""
    k = random.randint(6, 250)
    with namespace("kid", "198.18.5") as kid, namespace("oth", f"198.18.{k}") as other:
        r = await wf.api.post("/api/settings", json={"dns_listen": listen(kid, other)})
        assert r.status_code == 200, r.text
        created = await wf.api.post("/api/groups", json={**KIDS, "whitelist": ["ads.trk.test"]})
        assert created.status_code == 200, created.text
        await wf.api.post("/api/domain-blacklist", json={"domain": "trk.test"})
        try:
            (view,) = (await status(wf))["dns_views"]
            # the group's whitelist exempts ads.trk.test for the group only (no upstream here: not sinkholed,
            # refused, so no address)
            assert await lan_resolve(kid, kid.host, "ads.trk.test") == []
            assert await lan_resolve(other, other.host, "ads.trk.test") == ["0.0.0.0"]
            # another network asking the group's view at its port directly gets nothing, nor does the group's
            # own client (only its queries to port 53 are steered there)
            direct = await lan_resolve(other, other.host, "ads.trk.test", port=view["port"], timeout=1)
            assert direct == ["TIMEOUT"]
            assert await lan_resolve(kid, kid.host, "ads.trk.test", port=view["port"], timeout=1) == ["TIMEOUT"]
            # a client of another network claiming a group address is not steered (nor answered)
            add_address(other, "198.18.5.77")
            spoofed = await lan_resolve(other, other.host, "spoof-in.grp.test", source="198.18.5.77", timeout=1)
            assert spoofed == ["TIMEOUT"]
            # a group client claiming another network's address does not shed its group's view
            add_address(kid, f"198.18.{k}.77")
            shed = await lan_resolve(kid, kid.host, "spoof-out.grp.test", source=f"198.18.{k}.77", timeout=1)
            assert shed == ["TIMEOUT"]
            # neither query reached a dnsmasq: the marker asked after them is logged, they are not
            assert await lan_resolve(kid, kid.host, "marker.grp.test") == []
            await eventually(lambda: dns_rows(wf, "marker.grp.test"), what="the marker query's row")
            assert await dns_rows(wf, "spoof-in.grp.test") == [] and await dns_rows(wf, "spoof-out.grp.test") == []
            # a network in two groups: refused, so a client is steered to one view at most
            twice = await wf.api.post("/api/groups", json={**KIDS, "name": "teens", "networks": ["198.18.5.128/25"]})
            assert twice.status_code == 422 and "of the group kids" in twice.json()["detail"]
            assert [v["group"] for v in (await status(wf))["dns_views"]] == ["kids"]
        finally:
            await wf.api.delete(f"/api/groups/{created.json()['data']['id']}")
            assert (await wf.api.delete("/api/domain-blacklist/clear-all")).status_code == 200
            assert (await wf.api.post("/api/settings", json={"dns_listen": []})).status_code == 200


async def test_stop_removes_the_nft_table_and_a_local_group_client_is_steered_too(origin):
    async for service in running_service(state_folder(), origin):
        r = await service.api.post("/api/settings", json={"dns_listen": ["127.0.0.153"]})
        assert r.status_code == 200, r.text
        group = {**KIDS, "networks": ["127.0.5.0/24"], "blacklist": ["kidsgame.test"]}
        assert (await service.api.post("/api/groups", json=group)).status_code == 200
        table = (await status(service))["nft_table"]
        assert table is not None and f"table {table}" in nft_tables()
        # a process of this host in the group's network (output hook) gets the group's view
        local = await asyncio.to_thread(_resolve_from, "127.0.5.2", "127.0.0.153", "kidsgame.test")
        assert local == ["0.0.0.0"]
        # the rest of this host is answered by the global dnsmasq (no upstream: refused, no address)
        assert await asyncio.to_thread(_resolve_from, "127.0.0.1", "127.0.0.153", "kidsgame.test") == []
    assert f"table {table}" not in nft_tables()


def _resolve_from(source: str, server: str, name: str) -> list[str]:
    import dns.message
    import dns.query

    answer = dns.query.udp(dns.message.make_query(name, "A"), server, source=source, timeout=3)
    return sorted(item.address for rrset in answer.answer for item in rrset)


async def test_without_nft_a_group_with_dns_rules_is_refused_not_served_the_global_list(origin):
    no_nft = ProxyConfig(hosts=HOSTS, nft_bin="/nonexistent/nft")
    async for service in running_service(state_folder(), origin, proxy=no_nft):
        group = {**KIDS, "networks": ["127.0.5.0/24"]}
        assert (await service.api.post("/api/settings", json={"dns_listen": ["127.0.0.153"]})).status_code == 200
        refused = await service.api.post("/api/groups", json=group)
        assert refused.status_code == 400, refused.text
        assert "per-group DNS needs nftables" in refused.json()["detail"]
        assert (await service.api.get("/api/groups")).json()["data"] == []
        # without dns_listen only Squid asks our resolver: the group is the proxy's alone, and accepted
        assert (await service.api.post("/api/settings", json={"dns_listen": []})).status_code == 200
        assert (await service.api.post("/api/groups", json=group)).status_code == 200
        # then opening the resolver to clients is refused, with the reason, and not stored
        opened = await service.api.post("/api/settings", json={"dns_listen": ["127.0.0.153"]})
        assert opened.status_code == 400 and "nftables" in opened.json()["detail"]
        assert (await service.api.get("/api/settings")).json()["data"]["dns_listen"] == []


async def test_a_group_with_time_windows_is_steered_inside_them_only(wf):
    today = time.localtime().tm_wday
    elsewhere = [d for i, d in enumerate(DAYS) if i not in (today, (today + 1) % 7, (today - 1) % 7)]
    with namespace("kid", "198.18.5") as kid:
        assert (await wf.api.post("/api/settings", json={"dns_listen": [kid.host]})).status_code == 200
        later = {**KIDS, "windows": [{"days": elsewhere, "start": "00:00", "end": "23:59"}]}
        created = await wf.api.post("/api/groups", json=later)
        assert created.status_code == 200, created.text
        try:
            # outside its windows the group's client is answered by the global dnsmasq (refused: no upstream)
            assert await lan_resolve(kid, kid.host, "games.grp.test") == []
            always = {**KIDS, "windows": [{"days": DAYS, "start": "00:00", "end": "23:59"}]}
            assert (await wf.api.put(f"/api/groups/{created.json()['data']['id']}", json=always)).status_code == 200
            assert await lan_resolve(kid, kid.host, "games.grp.test") == ["0.0.0.0"]
        finally:
            await wf.api.delete(f"/api/groups/{created.json()['data']['id']}")
            assert (await wf.api.post("/api/settings", json={"dns_listen": []})).status_code == 200


async def test_outside_its_windows_the_groups_whitelist_still_beats_the_global_blacklist(wf):
    """Squid applies a group's whitelist at all times and its blacklist in its windows only; DNS does the
    same: outside the windows the group's client is answered by the group's second view (the global lists
    with the group's whitelist), inside them by its first."""
    today = time.localtime().tm_wday
    elsewhere = [d for i, d in enumerate(DAYS) if i not in (today, (today + 1) % 7, (today - 1) % 7)]
    async with two_networks(wf) as (kid, other, groups):
        assert (await wf.api.post("/api/domain-blacklist", json={"domain": "ads.grp.test"})).status_code == 200
        later = {
            **KIDS,
            "whitelist": ["ok.ads.grp.test"],
            "windows": [{"days": elsewhere, "start": "00:00", "end": "23:59"}],
        }
        created = await wf.api.post("/api/groups", json=later)
        assert created.status_code == 200, created.text
        groups.append(created.json()["data"]["id"])
        views = {(v["group"], v["outside"]): v for v in (await status(wf))["dns_views"]}
        assert set(views) == {("kids", False), ("kids", True)} and all(v["running"] for v in views.values())
        # outside the windows: the group's whitelist wins, its blacklist is off, the global list holds
        assert await lan_resolve(kid, kid.host, "ok.ads.grp.test") == ["127.0.0.1"]
        assert await lan_resolve(other, other.host, "ok.ads.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(kid, kid.host, "games.grp.test") == ["127.0.0.1"]
        assert await lan_resolve(kid, kid.host, "ads.grp.test") == ["0.0.0.0"]
        # inside a window: its blacklist too, and its whitelist still
        always = {**later, "windows": [{"days": DAYS, "start": "00:00", "end": "23:59"}]}
        assert (await wf.api.put(f"/api/groups/{groups[0]}", json=always)).status_code == 200
        assert await lan_resolve(kid, kid.host, "games.grp.test") == ["0.0.0.0"]
        assert await lan_resolve(kid, kid.host, "ok.ads.grp.test") == ["127.0.0.1"]
        assert await lan_resolve(other, other.host, "games.grp.test") == ["127.0.0.1"]
        rows = await eventually(lambda: dns_rows(wf, "ok.ads.grp.test"), what="the whitelisted name's rows")
        assert {row["group"] for row in rows if row["client_ip"] == kid.peer} == {"kids"}
