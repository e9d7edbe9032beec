"""Real client addresses: behind a load balancer the node takes the client's address from a PROXY
protocol header (`accept_proxy`) or from the last `X-Forwarded-For` hop a trusted proxy added
(`trusted_proxies`); everyone else is the socket peer, whatever it sends. Real PROXY v1 and v2
headers and real X-Forwarded-For headers over sockets from distinct loopback sources."""

from __future__ import annotations

import pytest

from actors.mitigation.haproxy_config import FRONTEND
from actors.mitigation.haproxy_stats import parse_table
from tests.deployments.mitigation.conftest import Fleet
from tests.deployments.mitigation.proxy_protocol import proxy_v1, proxy_v2, raw_get
from tests.deployments.mitigation.test_kept_stick_tables import flood
from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"
PROXY = "127.0.0.80"  # the load balancer in front of the node


async def tracked(fleet: Fleet) -> set[str]:
    """The sources in the node's stick table."""
    shown = await fleet.node().proc.command(f"show table {FRONTEND}")
    return {e.key.removeprefix("::ffff:") for e in parse_table(shown)}


async def ban(fleet: Fleet, ip: str) -> None:
    assert (await fleet.client.post(f"{NODE}/blacklist", json={"ip": ip, "duration_seconds": 600})).status_code == 201


# -- attackers first -------------------------------------------------------------
async def test_an_untrusted_client_cannot_change_its_tracked_address_with_x_forwarded_for(make_fleet):
    fleet = await make_fleet(trusted_proxies=[f"{PROXY}/32"])
    address = fleet.node().address
    assert await raw_get(address, "127.0.0.73", headers={"X-Forwarded-For": "127.0.0.99"}) == 200
    assert "127.0.0.73" in await tracked(fleet)
    assert "127.0.0.99" not in await tracked(fleet)


async def test_a_banned_or_flagged_client_cannot_escape_with_x_forwarded_for(make_fleet):
    fleet = await make_fleet(trusted_proxies=[f"{PROXY}/32"], flood_rps=5)
    address = fleet.node().address
    await ban(fleet, "127.0.0.74")
    assert await raw_get(address, "127.0.0.74", headers={"X-Forwarded-For": "127.0.0.98"}) == 0
    await flood(f"http://{address}/", "127.0.0.76")
    assert await raw_get(address, "127.0.0.76", headers={"X-Forwarded-For": "127.0.0.97"}) == 0
    assert await raw_get(address, "127.0.0.77", headers={"X-Forwarded-For": "127.0.0.97"}) == 200


@pytest.mark.parametrize("header", [proxy_v1, proxy_v2], ids=["v1", "v2"])
async def test_a_proxy_header_is_refused_when_accept_proxy_is_off(fleet, header):
    address = fleet.node().address
    status = await raw_get(address, "127.0.0.75", prefix=header("127.0.0.96"))
    assert status == 400  # not an HTTP request line: HAProxy answers 400 and closes, nothing is proxied
    assert "127.0.0.96" not in await tracked(fleet)


async def test_with_accept_proxy_a_connection_without_the_header_is_refused(make_fleet):
    fleet = await make_fleet(accept_proxy=True)
    assert await raw_get(fleet.node().address, "127.0.0.78") == 0


# -- behind a load balancer --------------------------------------------------------
@pytest.mark.parametrize("header", [proxy_v1, proxy_v2], ids=["v1", "v2"])
async def test_accept_proxy_tracks_and_bans_the_address_in_the_proxy_header(make_fleet, header):
    fleet = await make_fleet(accept_proxy=True)
    address = fleet.node().address
    assert await raw_get(address, PROXY, prefix=header("127.0.0.83")) == 200
    assert "127.0.0.83" in await tracked(fleet)
    assert PROXY not in await tracked(fleet)
    await ban(fleet, "127.0.0.84")
    assert await raw_get(address, PROXY, prefix=header("127.0.0.84")) == 0
    assert await raw_get(address, PROXY, prefix=header("127.0.0.85")) == 200


async def test_a_trusted_proxy_passes_on_the_last_x_forwarded_for_hop(make_fleet):
    fleet = await make_fleet(trusted_proxies=[f"{PROXY}/32"], flood_rps=5)
    address = fleet.node().address
    # the client may forge earlier hops: only the one the proxy appended counts
    assert await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.95, 127.0.0.81"}) == 200
    assert "127.0.0.81" in await tracked(fleet)
    assert {"127.0.0.95", PROXY}.isdisjoint(await tracked(fleet))
    await ban(fleet, "127.0.0.82")
    assert await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.82"}) == 403
    for _ in range(12):  # one client floods through the proxy
        await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.86"})
    assert await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.86"}) == 429
    assert await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.87"}) == 200  # the others pass


# -- the settings through the policy API -------------------------------------------
@pytest.mark.parametrize(
    "rule",
    [
        {"type": "client_address", "trusted_proxies": ["10.0.0.0/33"]},
        {"type": "client_address", "trusted_proxies": ["not-an-ip"]},
        {"type": "client_address", "trusted_proxies": ["fe80::1%eth0"]},
        {"type": "client_address", "trusted_proxies": "10.0.0.0/8"},
        {"type": "client_address", "accept_proxy": "true"},
        {"type": "client_address", "accept_proxy": 1},
        {"type": "client_address", "trusted_proxies": [], "extra": 1},
    ],
)
async def test_client_address_settings_are_strictly_typed(fleet, rule):
    answer = await fleet.client.post("/api/v1/policy", json={"name": "lb", "rules": [rule]})
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "validation_error"
    assert (await fleet.client.get("/api/v1/policy")).json()["trusted_proxies"] == []


async def test_client_address_settings_are_applied_kept_and_removed(fleet):
    address = fleet.node().address
    rule = {"type": "client_address", "trusted_proxies": [f"{PROXY}/32", "::1/128"], "accept_proxy": False}
    answer = await fleet.client.post("/api/v1/policy", json={"name": "lb", "rules": [rule]})
    assert answer.status_code == 200 and answer.json()["status"] == "deployed"
    view = (await fleet.client.get("/api/v1/policy")).json()
    assert view["trusted_proxies"] == [f"{PROXY}/32", "::1/128"] and view["accept_proxy"] is False
    assert fleet.node().state.policy.get("changes")["trusted_proxies"] == [f"{PROXY}/32", "::1/128"]
    assert await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.88"}) == 200
    assert "127.0.0.88" in await tracked(fleet)

    removed = await fleet.client.delete("/api/v1/policy/client_address")
    assert removed.status_code == 200 and removed.json()["trusted_proxies"] == []
    assert await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.89"}) == 200
    assert "127.0.0.89" not in await tracked(fleet)
    assert (await fleet.client.delete("/api/v1/policy/client_address")).status_code == 404

    on = {"type": "client_address", "accept_proxy": True}
    assert (await fleet.client.post("/api/v1/policy", json={"name": "lb", "rules": [on]})).status_code == 200
    await eventually(
        lambda: raw_get(address, PROXY, prefix=proxy_v2("127.0.0.90")), what="accept-proxy in force after the reload"
    )
    assert "127.0.0.90" in await tracked(fleet)
    assert await raw_get(address, PROXY) == 0


async def test_in_syn_mode_the_connection_rate_is_counted_per_address_in_the_proxy_header(make_fleet):
    fleet = await make_fleet(mode="syn", accept_proxy=True, syn_conn_rate=5)
    address = fleet.node().address
    codes = [await raw_get(address, PROXY, prefix=proxy_v2("127.0.0.91")) for _ in range(15)]
    assert codes[:5] == [200] * 5 and codes[-1] == 0  # over 5 new connections/s: refused
    assert await raw_get(address, PROXY, prefix=proxy_v1("127.0.0.92")) == 200  # same balancer, other client
    assert PROXY not in await tracked(fleet)
