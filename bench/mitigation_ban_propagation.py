"""Ban propagation across a 3-node mitigation fleet with fleet-wide counting on (`fleet_flood_rps`).

Each trial: a fresh source (127.0.1.N) floods node-1 until node-1 flags it (its first 429: the
"ban on one node"); from that moment the other two nodes are watched until their HAProxy
holds the source in its blacklist map (read over the runtime API every 5 ms, no traffic from the
source, so they cannot flag it themselves), then one real request from the source must be
refused by each. Printed: time from node-1's refusal to enforcement on both others, median and
max over the trials, against the goal of 1 s. The fleet sums the nodes' tables every
`fleet_count_interval_s` (default 0.25 s), which bounds the figure.

Usage: python bench/mitigation_ban_propagation.py [--trials 10] [--interval 0.25]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from actors.mitigation.fleet import MitigationFleet  # noqa: E402
from actors.mitigation.node import MitigationNode  # noqa: E402
from actors.mitigation.settings import FleetSettings, NodeSettings  # noqa: E402
from rayfleet import state  # noqa: E402
from rayfleet.durable import DSN_ENV  # noqa: E402
from tests.actors.mitigation.origin import static_origin  # noqa: E402

GOAL_S = 1.0


async def first_refusal(url: str, source: str) -> float:
    """Flood `url` from `source` until the node flags it (its first 429, or a refused connection);
    return when."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=3) as client:
        for _ in range(2000):
            try:
                if (await client.get(url)).status_code == 429:
                    return time.perf_counter()
            except httpx.TransportError:
                return time.perf_counter()
    raise RuntimeError(f"{source} was never refused by {url}")


async def refused(url: str, source: str) -> bool:
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=3) as client:
        try:
            await client.get(url)
        except httpx.TransportError:
            return True
    return False


async def trial(fleet: MitigationFleet, n: int) -> float:
    source = f"127.0.1.{n + 10}"
    node_1, *others = [cast(MitigationNode, fleet.nodes[i].handle.instance) for i in ("node-1", "node-2", "node-3")]
    flagged_at = await first_refusal(f"http://{node_1.address}/", source)
    pending = list(others)
    while pending:
        for node in list(pending):
            shown = await node.proc.command(f"show map {node.paths.blacklist}")
            if any(line.split()[1:2] == [source] for line in shown.splitlines()):
                pending.remove(node)
        if pending:
            if time.perf_counter() - flagged_at > 30:
                raise RuntimeError(f"{source} not banned on every node after 30 s")
            await asyncio.sleep(0.005)
    enforced = time.perf_counter() - flagged_at
    for node in others:
        if not await refused(f"http://{node.address}/", source):
            raise RuntimeError(f"{node.node_id} has {source} in its map but served it")
    return enforced


async def main(trials: int, interval: float) -> None:
    # a store of its own: a second run must not find the first run's bans already in place
    scratch = tempfile.TemporaryDirectory(prefix="rf-bench-bans-")
    os.environ[DSN_ENV] = f"sqlite:///{scratch.name}/durable.sqlite3"
    with scratch, static_origin() as origin, state.local_state():
        settings = FleetSettings(
            initial_nodes=3,
            fleet_count_interval_s=interval,
            fleet_flood_rps=10**6,  # only the flag of one node triggers the fleet ban here
            node=NodeSettings(origin=origin, flood_rps=20, ban_seconds=600, log_sample_percent=0),
        )
        fleet = MitigationFleet(settings, name="bench-ban-propagation")
        try:
            await fleet.ensure_started()
            timings = [await trial(fleet, n) for n in range(trials)]
        finally:
            with contextlib.suppress(Exception):
                await fleet.shutdown()
    median, worst = statistics.median(timings), max(timings)
    print(f"ban propagation, 3-node fleet, fleet_count_interval_s {interval:g}, {trials} sources flagged by node-1")
    print(f"  node-1 refuses -> node-2 and node-3 enforce: median {median * 1000:.0f} ms, max {worst * 1000:.0f} ms")
    print(f"  against the goal of {GOAL_S:g} s: median x{median / GOAL_S:.2f}, max x{worst / GOAL_S:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--interval", type=float, default=0.25)
    args = parser.parse_args()
    asyncio.run(main(args.trials, args.interval))
