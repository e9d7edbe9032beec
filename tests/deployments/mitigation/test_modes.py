"""SYN mode (TCP proxy with connection-rate limits) and the slowloris guard of l7 mode."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from typing import Any

import httpx

from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"


async def _at_least(value: Awaitable[int], least: int) -> bool:
    return await value >= least


def _flagged(sources: dict[str, Any], src: str) -> bool:
    record = sources.get(src)
    return record is not None and record.flagged_since is not None


async def test_syn_mode_limits_new_connections_per_source(make_fleet):
    fleet = await make_fleet(mode="syn", syn_conn_rate=5)
    status = (await fleet.client.get(f"{NODE}/status")).json()
    assert status["mode"] == "syn"
    served = refused = 0
    async with httpx.AsyncClient(trust_env=False, timeout=3, limits=httpx.Limits(max_keepalive_connections=0)) as c:
        for _ in range(20):
            try:
                served += (await c.get(fleet.node_url() + "/")).status_code == 200
            except httpx.TransportError:
                refused += 1
    assert served == 5 and refused == 15

    async def blocked() -> int:
        return int((await fleet.client.get(f"{NODE}/stats")).json()["attacks_blocked"])

    await eventually(lambda: _at_least(blocked(), 15), what="the refusals counted")
    threats = (await fleet.client.get("/api/v1/threats")).json()
    assert threats["attack_types"]["syn_flood"] >= 15


async def test_syn_mode_refuses_waf_rules_with_409(make_fleet):
    fleet = await make_fleet(mode="syn")
    response = await fleet.client.post(f"{NODE}/rules", json={"pattern": "x", "action": "block", "severity": "high"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


async def test_slow_headers_are_cut_and_a_repeat_offender_is_reported(make_fleet, data_plane):
    fleet = await make_fleet(http_request_timeout_s=0.5)
    host, port = fleet.node().address.split(":")
    for _ in range(3):
        reader, writer = await asyncio.open_connection(host, int(port), local_addr=("127.0.0.44", 0))
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
        answer = await asyncio.wait_for(reader.read(), 5)
        assert answer.startswith(b"HTTP/1.1 408")
        writer.close()
    assert (await data_plane.get(fleet.node_url() + "/")).status_code == 200
    event = await eventually(
        lambda: next((e for e in fleet.node().events() if e["data"]["attack_type"] == "slowloris"), None),
        what="a slowloris event",
    )
    assert event["event"] == "attack_detected" and event["data"]["source_ip"] == "127.0.0.44"


async def test_a_repeat_flooder_is_blacklisted_longer_each_time(make_fleet):
    fleet = await make_fleet(flood_rps=5, ban_seconds=1, escalation_multiplier=3)

    async def burst() -> None:  # fresh connections: an open one keeps its stick-table entry alive
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.91")
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=3, limits=limits) as attacker:
            for _ in range(15):
                with contextlib.suppress(httpx.TransportError):
                    await attacker.get(fleet.node_url() + "/")

    await burst()
    threats = fleet.node().threats.sources
    await eventually(lambda: _flagged(threats, "127.0.0.91"), what="the flood seen by the node's poll")
    assert "127.0.0.91" not in fleet.node().blacklist  # first offence: the stick-table ban only
    # the stick-table entry expires (ban_seconds) and the poll sees it leave
    await eventually(lambda: not _flagged(threats, "127.0.0.91"), what="the stick-table ban lapsed")
    before = int(time.time())
    await burst()
    await eventually(lambda: "127.0.0.91" in fleet.node().blacklist, what="the repeat flooder blacklisted")
    after = int(time.time()) + 1
    entry = fleet.node().blacklist["127.0.0.91"]
    assert entry["reason"].startswith("repeat http_flood (offence 2)")
    listed = (await fleet.client.get("/nodes/node-1/api/v1/blacklist")).json()["entries"]
    assert [(e["ip"], e["source"]) for e in listed] == [("127.0.0.91", "escalation/http_flood")]  # the rule
    # expires = (whole second the ban was set) + duration, set between `before` and `after`:
    # the duration is ban_seconds x 3 = 3 whatever the machine's speed
    assert entry["expires"] - after <= 3 <= entry["expires"] - before
