"""Stick tables survive a policy reload and a HAProxy restart: a source flagged as a flood stays
flagged and refused, instead of being let in again by the new workers' empty table. Checked with
real traffic from distinct loopback sources against a real HAProxy."""

from __future__ import annotations

import contextlib
import os
import signal

import httpx

from actors.mitigation.haproxy_config import FRONTEND
from actors.mitigation.haproxy_stats import parse_table
from tests.deployments.mitigation.conftest import Fleet
from tests.deployments.mitigation.test_kept_state import get
from tests.deployments.mitigation.test_modes import _flagged
from tests.polling import eventually

FLOODER = "127.0.0.61"
BYSTANDER = "127.0.0.62"


async def flood(url: str, source: str, requests: int = 20) -> None:
    """Back-to-back requests from `source`, one fresh connection each."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=3, limits=limits) as client:
        for _ in range(requests):
            with contextlib.suppress(httpx.TransportError):
                await client.get(url)


async def table_row(fleet: Fleet, source: str) -> dict[str, int]:
    """The source's stick-table entry in the current worker ({} when it has none); asked through the
    master, since an old worker can answer the shared admin socket for a moment after a reload."""
    proc = fleet.node().proc
    worker = await proc.current_worker()
    assert worker is not None
    shown = await proc.worker_command(worker, f"show table {FRONTEND}")
    rows = [e.fields for e in parse_table(shown) if e.key.removeprefix("::ffff:") == source]
    return rows[0] if rows else {}


async def worker_pid(fleet: Fleet) -> int | None:
    return await fleet.node().proc.current_worker()


async def test_a_flagged_flooder_stays_refused_across_a_policy_reload_and_a_haproxy_restart(make_fleet):
    fleet = await make_fleet(flood_rps=5, ban_seconds=300)
    url = fleet.node_url() + "/"
    await flood(url, FLOODER)
    assert (await table_row(fleet, FLOODER)).get("gpt0") == 1
    # the node's poll has seen it (what a restart nobody saw coming can carry over)
    await eventually(lambda: _flagged(fleet.node().threats.sources, FLOODER), what="the flood seen by the poll")
    assert await get(url, FLOODER) == 0
    assert await get(url, BYSTANDER) == 200
    flood_denials = (await table_row(fleet, FLOODER))["gpc1"]

    before = await worker_pid(fleet)
    deployed = await fleet.client.post(
        "/api/v1/policy", json={"name": "p", "rules": [{"type": "rate_limit", "value": 1000}]}
    )
    assert deployed.status_code == 200 and deployed.json()["status"] == "deployed"
    assert await worker_pid(fleet) != before  # new workers, with a new table
    row = await table_row(fleet, FLOODER)
    assert row.get("gpt0") == 1 and row["gpc1"] >= flood_denials
    assert await get(url, FLOODER) == 0
    assert await get(url, BYSTANDER) == 200

    node = fleet.node()
    master = node.proc.pid
    assert master is not None
    os.killpg(master, signal.SIGKILL)  # master and workers: nothing of the old process is left
    await eventually(
        lambda: node.proc.supervised.restarts == 1 and node.proc.running and node.proc.pid != master,
        timeout=15,
        what="HAProxy restarted by its supervisor",
    )

    async def flag_back() -> bool:  # the restore runs right after the new process answers
        return (await table_row(fleet, FLOODER)).get("gpt0") == 1

    await eventually(flag_back, timeout=5, what="the flag restored into the new process")
    assert await get(url, FLOODER) == 0
    assert await get(url, BYSTANDER) == 200
    assert FLOODER not in node.blacklist  # still the stick-table flag, not an escalated ban


async def test_per_source_rates_are_carried_over_a_reload(make_fleet):
    fleet = await make_fleet(flood_rps=1000)
    await flood(fleet.node_url() + "/", BYSTANDER, requests=30)
    counted = (await table_row(fleet, BYSTANDER))["http_req_rate(1000)"]
    assert counted >= 1
    before = await worker_pid(fleet)
    await fleet.node().apply_settings({"rate_limit_rps": 500})
    assert await worker_pid(fleet) != before
    assert (await table_row(fleet, BYSTANDER)).get("http_req_rate(1000)", 0) >= 1
