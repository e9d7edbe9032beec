"""IPv6 sources: rate limits, flood flags and bans hold for ::1 as for 127.0.0.x, on a node that
listens on both 127.0.0.1 and ::1 (`also_listen`). One stick table (`type ipv6`) holds both
families, IPv4 sources as mapped addresses, shown everywhere as plain IPv4."""

from __future__ import annotations

import contextlib

import httpx
import pytest
from pydantic import ValidationError

from actors.mitigation.settings import NodeSettings
from tests.deployments.mitigation.conftest import Fleet
from tests.deployments.mitigation.test_client_address import tracked
from tests.deployments.mitigation.test_kept_state import get
from tests.deployments.mitigation.test_kept_stick_tables import flood
from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"


def v6_url(fleet: Fleet) -> str:
    return f"http://[::1]:{fleet.node().port}/"


async def test_a_node_with_also_listen_answers_on_ipv6_and_ipv4(make_fleet):
    fleet = await make_fleet(also_listen=["::1"])
    assert await get(v6_url(fleet), "::1") == 200
    assert await get(fleet.node_url() + "/", "127.0.0.1") == 200
    assert "::1" in await tracked(fleet)


async def test_the_rate_limit_holds_for_an_ipv6_source(make_fleet):
    fleet = await make_fleet(also_listen=["::1"], rate_limit_rps=3, flood_rps=1000)
    transport = httpx.AsyncHTTPTransport(local_address="::1")
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=5) as client:
        codes = [(await client.get(v6_url(fleet))).status_code for _ in range(10)]
    assert codes[:3] == [200, 200, 200] and 429 in codes
    assert await get(fleet.node_url() + "/", "127.0.0.1") == 200  # IPv4 sources are counted apart


async def test_a_ban_and_its_lifting_hold_for_an_ipv6_source(make_fleet):
    fleet = await make_fleet(also_listen=["::1"])
    banned = await fleet.client.post(f"{NODE}/blacklist", json={"ip": "::1", "duration_seconds": 600})
    assert banned.status_code == 201
    assert await get(v6_url(fleet), "::1") == 0
    assert await get(fleet.node_url() + "/", "127.0.0.1") == 200
    assert (await fleet.client.delete(f"{NODE}/blacklist/::1")).status_code == 200
    assert await get(v6_url(fleet), "::1") == 200


async def test_an_ipv6_flooder_is_flagged_and_refused_and_reported_by_its_address(make_fleet):
    fleet = await make_fleet(also_listen=["::1"], flood_rps=5)
    await flood(v6_url(fleet), "::1")
    assert await get(v6_url(fleet), "::1") == 0
    assert await get(fleet.node_url() + "/", "127.0.0.1") == 200
    event = await eventually(
        lambda: next((e for e in fleet.node().events() if e["data"]["source_ip"] == "::1"), None),
        what="an attack_detected event for ::1",
    )
    assert event["data"]["attack_type"] == "http_flood"


async def test_ipv4_flooders_share_the_table_and_are_reported_as_ipv4(make_fleet):
    fleet = await make_fleet(also_listen=["::1"], flood_rps=5)
    await flood(fleet.node_url() + "/", "127.0.0.64")
    assert await get(fleet.node_url() + "/", "127.0.0.64") == 0
    event = await eventually(
        lambda: next((e for e in fleet.node().events() if e["event"] == "attack_detected"), None),
        what="an attack_detected event",
    )
    assert event["data"]["source_ip"] == "127.0.0.64"
    threats = (await fleet.client.get("/api/v1/threats")).json()
    assert [a["ip"] for a in threats["top_attackers"]] == ["127.0.0.64"]
    # lifting a ban clears the source's entry (its flood flag) in the mapped form too
    await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.64", "duration_seconds": 600})
    assert (await fleet.client.delete(f"{NODE}/blacklist/127.0.0.64")).status_code == 200
    with contextlib.suppress(httpx.TransportError):
        assert await get(fleet.node_url() + "/", "127.0.0.64") == 200


@pytest.mark.parametrize("bad", [["not-an-ip"], ["::1%lo"], "::1", ["10.0.0.0/8"], [1]])
def test_also_listen_takes_a_list_of_addresses(bad):
    with pytest.raises(ValidationError, match="also_listen"):
        NodeSettings(also_listen=bad)
