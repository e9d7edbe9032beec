"""Per-group DNS when our resolver listens on every address (`dns_listen: ["0.0.0.0"]`): a group's client is
steered to the group's own dnsmasq whichever address of the node it asks, another network's client is
answered by the global dnsmasq, and the attacks of test_group_dns.py fail in this mode too (asking a view's
port directly, a client of another network claiming a group address, a group client claiming another
network's address).

A wildcard listener listens on every address of its network namespace: on this machine's, that would be
its real interfaces and port 53 of every address (taking it from any other resolver running here). So the
web filter of these tests runs in a network namespace of its own, holding only its loopback and the veth
pairs the tests create (198.18.0.0/15): `test_wildcard_mode_in_a_network_namespace_of_its_own` runs this
module again there (pytest in a child process), where the other tests run; here they are skipped. Clients
are in namespaces over veth pairs, the upstream a dnsmasq in another, as in test_group_dns.py."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.deployments.webfilter.conftest import require_dataplane
from tests.deployments.webfilter.netns import (
    add_ipv6,
    default_route,
    lan_resolve,
    namespace,
    private_network,
    upstream_resolver,
)
from tests.deployments.webfilter.test_group_dns import RECORDS, attackers_get_nothing, dns_rows, nft_tables, status
from tests.polling import eventually

pytestmark = [
    pytest.mark.realserver,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and nft need root"),
]

INSIDE = "RAYFLEET_WF_PRIVATE_NETWORK"
ROOT = Path(__file__).resolve().parents[3]
inside = pytest.mark.skipif(
    not os.environ.get(INSIDE), reason="run in a network namespace of its own by test_wildcard_mode_in_a_network..."
)
KIDS = {
    "name": "kids",
    "networks": ["198.18.5.0/24", "127.0.5.0/24"],
    "blacklist": ["games.grp.test"],
    "whitelist": [],
}
INNER_TESTS = 5


def test_wildcard_mode_in_a_network_namespace_of_its_own():
    if os.environ.get(INSIDE):
        pytest.skip("the runner itself")
    require_dataplane()
    with private_network("wild") as network:
        done = subprocess.run(
            ["nsenter", f"--net=/run/netns/{network}", sys.executable, "-m", "pytest", "-q", __file__],
            cwd=ROOT,
            env={**os.environ, INSIDE: network},
            capture_output=True,
            text=True,
            timeout=900,
        )
    summary = (done.stdout + done.stderr)[-6000:]
    assert done.returncode == 0, summary
    assert f"{INNER_TESTS} passed, 1 skipped" in summary, summary


async def _resolve_from(source: str, server: str, name: str) -> list[str]:
    def ask() -> list[str]:
        import dns.message
        import dns.query

        answer = dns.query.udp(dns.message.make_query(name, "A"), server, source=source, timeout=3)
        return sorted(item.address for rrset in answer.answer for item in rrset)

    return await asyncio.to_thread(ask)


async def _listen_everywhere(wf: Any, **more: Any) -> None:
    r = await wf.api.post("/api/settings", json={"dns_listen": ["0.0.0.0"], **more})
    assert r.status_code == 200, r.text


async def _close(wf: Any, group_id: int | None) -> None:
    if group_id is not None:
        await wf.api.delete(f"/api/groups/{group_id}")
    assert (await wf.api.delete("/api/domain-blacklist/clear-all")).status_code == 200
    r = await wf.api.post("/api/settings", json={"dns_listen": [], "dns_upstreams": []})
    assert r.status_code == 200, r.text


@inside
async def test_a_group_client_gets_its_view_on_every_address_and_another_network_does_not(wf):
    k = random.randint(6, 250)
    with (
        namespace("kid", "198.18.5") as kid,
        namespace("oth", f"198.18.{k}") as other,
        namespace("up", f"198.19.{k}") as up,
    ):
        default_route(kid)
        async with upstream_resolver(up, RECORDS):
            await _listen_everywhere(wf, dns_upstreams=[up.peer])
            group_id = None
            try:
                # the global dnsmasq answers on every address: both networks get the upstream's answer
                assert await lan_resolve(kid, kid.host, "games.grp.test") == ["127.0.0.1"]
                assert await lan_resolve(other, other.host, "games.grp.test") == ["127.0.0.1"]
                created = await wf.api.post("/api/groups", json=KIDS)
                assert created.status_code == 200, created.text
                group_id = created.json()["data"]["id"]
                (view,) = (await status(wf))["dns_views"]
                assert view["group"] == "kids" and view["running"]
                assert f"table {(await status(wf))['nft_table']}" in nft_tables()
                # the group's client gets the group's sinkhole, at its own network's address of the node and at
                # another of the node's addresses; the other network's client the upstream's answer
                assert await lan_resolve(kid, kid.host, "games.grp.test") == ["0.0.0.0"]
                assert await lan_resolve(kid, other.host, "x.games.grp.test") == ["0.0.0.0"]
                assert await lan_resolve(other, other.host, "games.grp.test") == ["127.0.0.1"]
                # a global rule holds for both
                assert (await wf.api.post("/api/domain-blacklist", json={"domain": "ads.grp.test"})).status_code == 200
                assert await lan_resolve(kid, kid.host, "ads.grp.test") == ["0.0.0.0"]
                assert await lan_resolve(other, other.host, "ads.grp.test") == ["0.0.0.0"]
                # the query log names the group whose view answered
                (row,) = await eventually(lambda: _answered_by_kids(wf, "x.games.grp.test"), what="the view's row")
                assert (row["client_ip"], row["outcome"], row["source"]) == (kid.peer, "sinkholed", "group:kids")

                # a process of this node in the group's network is steered too, whichever local address it asks
                assert await _resolve_from("127.0.5.2", "127.0.0.1", "games.grp.test") == ["0.0.0.0"]
                assert await _resolve_from("127.0.5.2", other.host, "games.grp.test") == ["0.0.0.0"]
                # the rest of the node gets the global view, and Squid's own resolver address is never steered
                assert await _resolve_from("127.0.0.1", "127.0.0.1", "games.grp.test") == ["127.0.0.1"]
                own = (await wf.api.get("/health")).json()["dns"]["address"].removesuffix(":53")
                assert await _resolve_from("127.0.5.2", own, "games.grp.test") == ["127.0.0.1"]
            finally:
                await _close(wf, group_id)
            assert (await status(wf))["dns_views"] == [] and (await status(wf))["nft_table"] is None


async def _answered_by_kids(wf: Any, name: str) -> list[dict[str, Any]]:
    return [row for row in await dns_rows(wf, name) if row["group"] == "kids"]


@inside
async def test_attackers_cannot_reach_a_view_directly_nor_claim_or_shed_a_group_address(wf):
    await attackers_get_nothing(wf, lambda kid, other: ["0.0.0.0"])


@inside
async def test_a_wildcard_and_an_address_of_the_same_family_listen_once(wf):
    """`0.0.0.0` next to an address of this node: the wildcard covers it (binding both would collide)."""
    with namespace("kid", "198.18.5") as kid:
        r = await wf.api.post("/api/settings", json={"dns_listen": [kid.host, "0.0.0.0"]})
        assert r.status_code == 200, r.text
        created = await wf.api.post("/api/groups", json=KIDS)
        assert created.status_code == 200, created.text
        try:
            assert await lan_resolve(kid, kid.host, "games.grp.test") == ["0.0.0.0"]
            assert await _resolve_from("127.0.0.1", "127.0.0.1", "games.grp.test") == []  # global, no upstream
        finally:
            await _close(wf, created.json()["data"]["id"])


@inside
async def test_a_wildcard_is_refused_while_another_resolver_listens_on_port_53_of_the_node(wf):
    """dnsmasq's wildcard sockets take port 53 of every address: with another resolver's on one, the change
    is refused with the reason (400), nothing is stored, and our dnsmasq keeps answering."""
    other = socket.socket()
    other.bind(("127.0.0.77", 53))
    other.listen()
    try:
        refused = await wf.api.post("/api/settings", json={"dns_listen": ["0.0.0.0"]})
        assert refused.status_code == 400, refused.text
        detail = refused.json()["detail"]
        assert "dns_listen 0.0.0.0 is taken: 127.0.0.77 already listen on port 53 of this node" in detail
        assert (await wf.api.get("/api/settings")).json()["data"]["dns_listen"] == []
        assert await wf.resolve("allowed.test") == ["127.0.0.1"]
    finally:
        other.close()
    await _listen_everywhere(wf)  # once it is gone, accepted
    await _close(wf, None)


@inside
async def test_a_wildcard_answers_and_steers_ipv6_too(wf):
    """dnsmasq's wildcard mode answers both families, so `0.0.0.0` steers a group's IPv6 client as well: its
    query to the node's IPv6 address is redirected to its view; another network's IPv6 client gets the global
    lists."""
    k = random.randint(6, 250)
    with namespace("kid", "198.18.5") as kid, namespace("oth", f"198.18.{k}") as other:
        kid_host, _ = add_ipv6(kid, "2001:2:0:5::")
        other_host, _ = add_ipv6(other, f"2001:2:0:{k:x}::")
        await _listen_everywhere(wf)
        created = await wf.api.post("/api/groups", json={**KIDS, "networks": ["198.18.5.0/24", "2001:2:0:5::/64"]})
        assert created.status_code == 200, created.text
        await wf.api.post("/api/domain-blacklist", json={"domain": "ads.grp.test"})
        try:
            assert await lan_resolve(kid, kid_host, "games.grp.test") == ["0.0.0.0"]
            assert await lan_resolve(other, other_host, "games.grp.test") == []  # global: no upstream, refused
            assert await lan_resolve(other, other_host, "ads.grp.test") == ["0.0.0.0"]
            (view,) = (await status(wf))["dns_views"]
            assert await lan_resolve(other, other_host, "games.grp.test", port=view["port"], timeout=1) == ["TIMEOUT"]
        finally:
            await _close(wf, created.json()["data"]["id"])
