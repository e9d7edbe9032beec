"""One round of the fleet-wide count, step by step, at `--sources` active sources on each of 3 nodes.

Each node's stick table is filled with `--sources` entries (`set table ... data.http_req_rate 1`,
so every source sums to 3 requests/s over the nodes, above `fleet_flood_rps` 2, and is banned).
A round's steps are timed as the fleet runs them (`MitigationFleet.count_fleet_wide`):
  show        `show table mitigation data.http_req_rate gt 0` on each node (the runtime API call)
  parse       the answers parsed into `{ip, rate, flagged}` reports
  sum+decide  `fleet_flooders`: rates summed per source, compared with the threshold
  ban         the batch of fleet bans: the fleet's record, then each node (HAProxy, record, map file)
and the whole round through `count_fleet_wide`. Wall and CPU (this process: the fleet and its node
actors) per step, median of `--rounds`. The peer, in the same run, is the ban step sent as one
`del map` + `add map` command pair per source on `;`-joined CLI lines (how batches were sent
before), against the payloads the node sends now: the ratio compares the HAProxy part of the ban step.

Usage: python bench/mitigation_count_round.py [--sources 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from actors.mitigation.fleet import MitigationFleet  # noqa: E402
from actors.mitigation.fleet_counting import fleet_flooders  # noqa: E402
from actors.mitigation.haproxy_config import FRONTEND, source_of  # noqa: E402
from actors.mitigation.haproxy_stats import parse_table  # noqa: E402
from actors.mitigation.node import MitigationNode  # noqa: E402
from actors.mitigation.settings import FleetSettings, NodeSettings  # noqa: E402
from actors.mitigation.stick_table import cli_lines  # noqa: E402
from rayfleet import state  # noqa: E402
from rayfleet.durable import DSN_ENV  # noqa: E402
from tests.actors.mitigation.origin import static_origin  # noqa: E402

THRESHOLD = 2


class Steps:
    """Wall and CPU seconds per step, over the rounds."""

    def __init__(self) -> None:
        self.samples: dict[str, list[tuple[float, float]]] = {}

    async def time(self, step: str, work: Callable[[], Awaitable[Any]]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        result = await work()
        self.samples.setdefault(step, []).append((time.perf_counter() - wall, time.process_time() - cpu))
        return result

    def median(self, step: str, which: int) -> float:
        return statistics.median(sample[which] for sample in self.samples[step])


def sources(count: int, round_no: int) -> list[str]:
    """`count` loopback sources, new ones each round (a banned source is not banned again)."""
    return [f"127.{10 + round_no}.{i // 250}.{1 + i % 250}" for i in range(count)]


async def fill(nodes: list[MitigationNode], ips: list[str]) -> None:
    commands = [f"set table {FRONTEND} key ::ffff:{ip} data.http_req_rate 1" for ip in ips]
    for node in nodes:
        await node.proc.command(f"clear table {FRONTEND}")  # only this round's sources are active
        for line in cli_lines(commands):
            await node.proc.command(line)


async def round_by_steps(fleet: MitigationFleet, nodes: list[MitigationNode], steps: Steps) -> int:
    async def show() -> list[str]:
        return [await n.proc.command(f"show table {FRONTEND} data.http_req_rate gt 0") for n in nodes]

    async def parse() -> dict[str, list[dict[str, object]]]:
        return {
            n.node_id: [
                {"ip": source_of(e.key), "rate": e.get("http_req_rate"), "flagged": e.get("gpt0") > 0}
                for e in parse_table(text)
            ]
            for n, text in zip(nodes, answers, strict=True)
        }

    answers = await steps.time("show", show)
    reports = await steps.time("parse", parse)

    async def decide() -> list[Any]:
        return fleet_flooders(reports, THRESHOLD)

    flooders = await steps.time("sum+decide", decide)
    banned = await steps.time("ban", lambda: fleet.add_blacklist_many([(f.ip, f.reason) for f in flooders], 600))
    return len(banned)


async def peer_ban(node: MitigationNode, ips: list[str]) -> None:
    """The ban step's HAProxy part as before: a `del map` + `add map` pair per source."""
    path, expires = node.paths.blacklist, int(time.time()) + 600
    commands = [c for ip in ips for c in (f"del map {path} {ip}", f"add map {path} {ip} {expires}")]
    for line in cli_lines(commands):
        await node.proc.command(line)


async def ours_ban(node: MitigationNode, ips: list[str]) -> None:
    await node.proc.add_map(node.paths.blacklist, [f"{ip} {int(time.time()) + 600}" for ip in ips])


async def main(args: argparse.Namespace) -> None:
    scratch = tempfile.TemporaryDirectory(prefix="rf-bench-count-")
    os.environ[DSN_ENV] = f"sqlite:///{scratch.name}/durable.sqlite3"
    with scratch, static_origin() as origin, state.local_state():
        node = NodeSettings(origin=origin, log_sample_percent=0, ban_seconds=600)
        fleet = MitigationFleet(
            FleetSettings(initial_nodes=3, heartbeat_interval_s=30.0, node=node), name="bench-count"
        )
        try:
            await fleet.ensure_started()
            nodes = [cast(MitigationNode, e.handle.instance) for e in fleet.nodes.values()]
            steps, banned = Steps(), []
            for round_no in range(args.rounds):
                await fill(nodes, sources(args.sources, 2 * round_no))
                banned.append(await round_by_steps(fleet, nodes, steps))
                await fill(nodes, sources(args.sources, 2 * round_no + 1))
                banned.append(len(await steps.time("whole round", lambda: fleet.count_fleet_wide(THRESHOLD))))
                for label, send in (("peer: del+add per source", peer_ban), ("ours: payloads", ours_ban)):
                    ips = [f"127.{100 + round_no}.{i // 250}.{1 + i % 250}" for i in range(args.sources)]
                    await steps.time(label, lambda send=send, ips=ips: send(nodes[0], ips))
                    await nodes[0].proc.replace_map(
                        nodes[0].paths.blacklist, nodes[0]._map_lines()[nodes[0].paths.blacklist]
                    )
        finally:
            await fleet.shutdown()
    print(f"fleet-wide count round, {args.sources} sources on each of 3 nodes, median of {args.rounds} rounds")
    print(f"sources banned per round: {sorted(set(banned))}")
    for step in ("show", "parse", "sum+decide", "ban", "whole round"):
        print(f"  {step:12s}: wall {steps.median(step, 0) * 1000:7.1f} ms, CPU {steps.median(step, 1) * 1000:6.1f} ms")
    peer, ours = (steps.median(s, 0) for s in ("peer: del+add per source", "ours: payloads"))
    print(
        f"HAProxy part of a {args.sources}-ban batch on one node: peer (del+add per source) {peer * 1000:.1f} ms, "
        f"ours (payloads) {ours * 1000:.1f} ms: x{peer / max(ours, 1e-9):.1f} faster"
    )
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
