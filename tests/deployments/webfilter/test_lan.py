"""The filter in front of a network: a LAN client in a network namespace of its own (veth pair,
198.18.0.0/15) uses Squid and our dnsmasq on the host end; our dnsmasq forwards to an upstream resolver,
another dnsmasq in a second namespace. Everything the test sends goes to addresses it created, and the
namespaces are removed at the end."""

from __future__ import annotations

import os
import random

import pytest

from tests.conftest import free_port
from tests.deployments.webfilter.netns import lan_get, lan_resolve, namespace, upstream_resolver

pytestmark = pytest.mark.realserver


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
