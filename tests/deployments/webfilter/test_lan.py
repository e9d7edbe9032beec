"""The filter in front of a network: a LAN client in a network namespace of its own (veth pair,
198.18.0.0/15) uses Squid and our dnsmasq on the host end; our dnsmasq forwards to an upstream resolver,
another dnsmasq in a second namespace. Everything the test sends goes to addresses it created, and the
namespaces are removed at the end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from tests.conftest import free_port

pytestmark = pytest.mark.realserver


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@dataclass
class Side:
    """A namespace joined to this one by a veth pair: `host` is our end's address, `peer` the namespace's."""

    ns: str
    link: str
    host: str
    peer: str

    def run(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns, *argv]


@contextlib.contextmanager
def namespace(prefix: str, net: str) -> Iterator[Side]:
    """`net` is a /24 prefix such as 198.18.7: our end is .1, the namespace's .2."""
    tag = f"{os.getpid() % 10000}{random.randint(10, 99)}"
    side = Side(f"rfwf-{prefix}-{tag}", f"rf{prefix}{tag}", f"{net}.1", f"{net}.2")
    try:
        _ip("netns", "add", side.ns)
        _ip("link", "add", side.link + "h", "type", "veth", "peer", "name", side.link + "n")
        _ip("link", "set", side.link + "n", "netns", side.ns)
        _ip("addr", "add", f"{side.host}/24", "dev", side.link + "h")
        _ip("link", "set", side.link + "h", "up")
        for args in (
            ("addr", "add", f"{side.peer}/24", "dev", side.link + "n"),
            ("link", "set", side.link + "n", "up"),
        ):
            _ip("netns", "exec", side.ns, "ip", *args)
        _ip("netns", "exec", side.ns, "ip", "link", "set", "lo", "up")
        yield side
    finally:
        subprocess.run(["ip", "link", "del", side.link + "h"], capture_output=True, timeout=10)
        subprocess.run(["ip", "netns", "del", side.ns], capture_output=True, timeout=10)


@contextlib.asynccontextmanager
async def upstream_resolver(side: Side, records: dict[str, str]) -> AsyncIterator[None]:
    """A dnsmasq in `side`'s namespace answering `records` (name -> address) and refusing the rest."""
    argv = side.run(
        "/usr/sbin/dnsmasq",
        "-k",
        "--no-resolv",
        "--no-hosts",
        "--port=53",
        f"--listen-address={side.peer}",
        "--bind-interfaces",
        "--user=root",
        "--pid-file=",
        *(f"--host-record={name},{address}" for name, address in records.items()),
    )
    child = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        yield
    finally:
        child.kill()
        await child.wait()


async def _run(argv: list[str]) -> str:
    child = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    out, _ = await child.communicate()
    return out.decode()


async def lan_get(lan: Side, proxy: str, url: str) -> tuple[int, str]:
    """A GET from the LAN client through the proxy: (status, body); status 0 when nothing answered."""
    out = await _run(lan.run("curl", "-s", "--max-time", "10", "-x", f"http://{proxy}", "-w", "\n%{http_code}", url))
    body, _, code = out.rpartition("\n")
    return int(code or 0), body


async def lan_resolve(lan: Side, server: str, name: str) -> list[str]:
    script = (
        "import sys, dns.message, dns.query, dns.rdatatype\n"
        "a = dns.query.udp(dns.message.make_query(sys.argv[2], dns.rdatatype.A), sys.argv[1], timeout=3)\n"
        "print('NXDOMAIN' if a.rcode() == 3 else ' '.join(sorted(i.address for r in a.answer for i in r)))\n"
    )
    return (await _run(lan.run(sys.executable, "-c", script, server, name))).split()


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
async def test_a_lan_client_is_served_filtered_refused_and_sinkholed_through_our_proxy_and_resolver(wf):
    k = random.randint(2, 250)
    with namespace("lan", f"198.18.{k}") as lan, namespace("up", f"198.19.{k}") as up:
        origin = wf.origin.port
        records = {"shop.lan.test": "127.0.0.1", "ads.lan.test": "127.0.0.1", "ok.ads.lan.test": "127.0.0.1"}
        async with upstream_resolver(up, records):
            port = free_port()
            proxy = f"{lan.host}:{port}"
            lan_net = f"198.18.{k}.0/24"
            r = await wf.api.post(
                "/api/settings",
                json={
                    "proxy_listen": [proxy],
                    "dns_listen": [lan.host],
                    "dns_upstreams": [up.peer],
                    "allowed_networks": ["127.0.0.0/8", "::1/128", lan_net],
                },
            )
            assert r.status_code == 200, r.text
            cleanup: list[str] = ["/api/domain-blacklist/clear-all"]
            try:
                # allowed: a name only the upstream knows, resolved by Squid through our dnsmasq
                status, body = await lan_get(lan, proxy, f"http://shop.lan.test:{origin}/lan-1")
                assert (status, body) == (200, "origin ok /lan-1")
                # DNS for the LAN: forwarded, and the blacklist sinkholed
                assert await lan_resolve(lan, lan.host, "shop.lan.test") == ["127.0.0.1"]
                assert (await wf.api.post("/api/domain-blacklist", json={"domain": "ads.lan.test"})).status_code == 200
                status, body = await lan_get(lan, proxy, f"http://ads.lan.test:{origin}/lan-2")
                assert status == 403 and "domain_blacklist" in body
                assert await lan_resolve(lan, lan.host, "ads.lan.test") == ["0.0.0.0"]
                assert await lan_resolve(lan, lan.host, "x.ads.lan.test") == ["0.0.0.0"]  # subdomains too
                # the whitelist wins in DNS as in the proxy
                white = await wf.api.post("/api/domain-whitelist", json={"domain": "ok.ads.lan.test"})
                assert white.status_code == 200
                cleanup.append(f"/api/domain-whitelist/{white.json()['data']['id']}")
                assert await lan_resolve(lan, lan.host, "ok.ads.lan.test") == ["127.0.0.1"]
                assert (await wf.api.put("/api/settings/dns_block_mode", json={"value": "nxdomain"})).status_code == 200
                assert await lan_resolve(lan, lan.host, "ads.lan.test") == ["NXDOMAIN"]
                # a network outside allowed_networks gets a refusal that says why
                r = await wf.api.put("/api/settings/allowed_networks", json={"value": ["127.0.0.0/8", "::1/128"]})
                assert r.status_code == 200
                status, body = await lan_get(lan, proxy, f"http://shop.lan.test:{origin}/lan-3")
                assert status == 403 and "client_not_allowed" in body
                # a listen address that is not this node's is refused, and nothing changes
                r = await wf.api.put("/api/settings/dns_listen", json={"value": [lan.host, "198.18.255.254"]})
                assert r.status_code == 400 and "not an address of this node" in r.json()["detail"]
                assert (await wf.api.get("/api/settings")).json()["data"]["dns_listen"] == [lan.host]
            finally:
                for path in cleanup:
                    await wf.api.delete(path)
                r = await wf.api.post(
                    "/api/settings",
                    json={
                        "proxy_listen": [],
                        "dns_listen": [],
                        "dns_upstreams": [],
                        "dns_block_mode": "sinkhole",
                        "allowed_networks": ["127.0.0.0/8", "::1/128"],
                    },
                )
                assert r.status_code == 200, r.text
            # the LAN listener is gone with the setting
            assert (await lan_get(lan, proxy, f"http://shop.lan.test:{origin}/lan-4"))[0] == 0
