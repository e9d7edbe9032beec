"""Mitigation node figures on loopback: a real HAProxy node in front of a static HAProxy origin.

Sources are many addresses of 127.0.0.0/8 (client sockets bound to 127.0.x.y).
Figures (every scenario stops by itself; about two minutes in all):
  clean     wrk through the node vs straight to the origin: rps (2xx only) and p99, and the
            CPU each HAProxy spends per request (the origin must be >= 10x cheaper than the node)
  flood     20 legitimate sources at 5 req/s, then 200 attacking sources back-to-back:
            legitimate success rate, share of attack requests blocked once a source is detected,
            time to detect (first block per source, and the node's attack_detected event)
  slowloris 500 slow-header sockets from 50 sources: legitimate success and p99 before vs during
  syn       syn mode, connect flood from 20 sources: connections served per source and second vs
            the limit, legitimate success rate; the kernel's SYN-cookie setting
  waf       the labelled corpus (tests/data/mitigation): detection and false-positive rates, PL1 and PL2
  propagate POST /rules on the orchestrator to enforcement on every node of a 3-node fleet

Usage: python bench/mitigation.py [--only clean,flood,...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from actors.mitigation.node import MitigationNode  # noqa: E402
from actors.mitigation.node_monitor import _proc_usage, _syncookies  # noqa: E402
from bench.mitigation_load import SourceStats, connect_loop, slowloris_socket, source_loop  # noqa: E402
from bench.wrk_load import wrk_run  # noqa: E402
from tests.actors.mitigation.origin import static_origin_process  # noqa: E402
from tests.actors.mitigation.waf_eval import evaluate  # noqa: E402

SCENARIOS = ("clean", "flood", "slowloris", "syn", "waf", "propagate")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def start_node(origin: str, **settings: Any) -> MitigationNode:
    node = MitigationNode("bench", {"origin": origin, **settings})
    await node.start()
    return node


def host_port(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host, int(port)


async def clean(origin: str, origin_pid: int) -> None:
    node = await start_node(origin, flood_rps=10**6, max_conn_per_source=10**4, log_sample_percent=0)
    try:
        cpu0 = _proc_usage([origin_pid])[0]
        direct = await asyncio.to_thread(wrk_run, f"http://{origin}/", 32, 5)
        cpu_origin_direct = _proc_usage([origin_pid])[0] - cpu0
        node_pids = node.proc.process_ids()
        n0, o0 = _proc_usage(node_pids)[0], _proc_usage([origin_pid])[0]
        through = await asyncio.to_thread(wrk_run, f"http://{node.address}/", 32, 5)
        node_cpu, origin_cpu = _proc_usage(node_pids)[0] - n0, _proc_usage([origin_pid])[0] - o0
    finally:
        await node.stop(forget=True)
    node_us = 1e6 * node_cpu / max(1, through.requests)
    origin_us = 1e6 * origin_cpu / max(1, through.requests)
    print("clean traffic (wrk, 32 connections, 5 s each, one source)")
    print(
        f"  straight to origin : {direct.rps:10.0f} rps  p99 {direct.p99_ms:6.2f} ms  (origin CPU {1e6 * cpu_origin_direct / max(1, direct.requests):.1f} us/req)"
    )
    print(f"  through the node   : {through.rps:10.0f} rps  p99 {through.p99_ms:6.2f} ms  non-2xx {through.non_2xx}")
    print(
        f"  node/origin        : rps x{through.rps / direct.rps:.2f}  p99 x{through.p99_ms / max(direct.p99_ms, 1e-6):.2f}"
    )
    print(
        f"  CPU per request    : node {node_us:.1f} us, origin {origin_us:.1f} us -> origin {node_us / max(origin_us, 1e-9):.1f}x cheaper"
    )


async def run_sources(
    host: str, port: int, sources: list[str], until: float, interval: float
) -> dict[str, SourceStats]:
    stats = {s: SourceStats() for s in sources}
    await asyncio.gather(*(source_loop(host, port, s, stats[s], until, interval) for s in sources))
    return stats


async def flood(origin: str) -> None:
    node = await start_node(origin, flood_rps=20, ban_seconds=30, log_sample_percent=0)
    host, port = host_port(node.address)
    legit = [f"127.0.1.{i}" for i in range(1, 21)]
    attackers = [f"127.0.{2 + i // 250}.{1 + i % 250}" for i in range(200)]
    try:
        start = time.monotonic()
        legit_task = asyncio.create_task(run_sources(host, port, legit, start + 12, 0.2))
        await asyncio.sleep(2)
        attack_start = time.monotonic()
        attack_wall = time.time()
        attack = await run_sources(host, port, attackers, attack_start + 8, 0.0)
        legit_stats = await legit_task
        await asyncio.sleep(0.6)
        events = [e for e in node.events(500) if e["event"] == "attack_detected"]
    finally:
        await node.stop(forget=True)
    legit_sent = sum(s.sent for s in legit_stats.values())
    legit_ok = sum(s.ok for s in legit_stats.values())
    sent = sum(s.sent for s in attack.values())
    after = sum(s.after_block_sent for s in attack.values())
    after_ok = sum(s.after_block_ok for s in attack.values())
    detect = [s.first_block - attack_start for s in attack.values() if s.first_block is not None]
    from datetime import datetime

    event_delays = [datetime.fromisoformat(e["timestamp"]).timestamp() - attack_wall for e in events]
    rate = sent / 8
    print("HTTP flood (200 attacking sources back-to-back for 8 s, 20 legitimate sources at 5 req/s; flood_rps 20)")
    print(
        f"  attack requests    : {sent} ({rate:.0f}/s in all, {rate / 200:.0f}/s per source = {rate / 200 / 5:.0f}x the legitimate rate)"
    )
    print(f"  legitimate success : {legit_ok}/{legit_sent} = {100 * legit_ok / max(1, legit_sent):.2f}%")
    print(
        f"  attack blocked once detected: {100 * (after - after_ok) / max(1, after):.2f}% ({after - after_ok}/{after})"
    )
    print(
        f"  sources detected   : {len(detect)}/200; time to first block per source: median {statistics.median(detect) * 1000 if detect else float('nan'):.0f} ms, max {max(detect, default=float('nan')) * 1000:.0f} ms"
    )
    print(
        f"  attack_detected events: {len(events)}; first {min(event_delays, default=float('nan')) * 1000:.0f} ms, median {statistics.median(event_delays) * 1000 if event_delays else float('nan'):.0f} ms after the attack began"
    )


async def slowloris(origin: str) -> None:
    node = await start_node(origin, http_request_timeout_s=5, log_sample_percent=0)
    host, port = host_port(node.address)
    legit = [f"127.0.1.{i}" for i in range(1, 21)]
    slow_sources = [f"127.0.5.{i}" for i in range(1, 51)]
    try:
        before = await run_sources(host, port, legit, time.monotonic() + 4, 0.2)
        counters = {"opened": 0, "cut": 0}
        until = time.monotonic() + 12
        slow = [slowloris_socket(host, port, s, until, counters) for s in slow_sources for _ in range(10)]
        slow_task = asyncio.gather(*slow)
        await asyncio.sleep(2)
        during = await run_sources(host, port, legit, until - 1, 0.2)
        active = (await node.status())["connections"]["active"]
        await slow_task
        await asyncio.sleep(0.5)
        detected = node.threat_summary()["attack_types"].get("slowloris", 0)
    finally:
        await node.stop(forget=True)

    def summary(stats: dict[str, SourceStats]) -> str:
        sent, ok = sum(s.sent for s in stats.values()), sum(s.ok for s in stats.values())
        lat = [x for s in stats.values() for x in s.latencies]
        return f"{ok}/{sent} = {100 * ok / max(1, sent):.2f}% ok, p99 {pct(lat, 0.99) * 1000:.1f} ms"

    print("slowloris (500 sockets from 50 sources sending a header line a second; timeout http-request 5 s)")
    print(f"  legitimate before  : {summary(before)}")
    print(f"  legitimate during  : {summary(during)}  (node connections open: {active})")
    print(f"  slow sockets opened: {counters['opened']}; slowloris detections: {detected}")


async def syn(origin: str) -> None:
    limit = 20
    node = await start_node(origin, mode="syn", syn_conn_rate=limit, log_sample_percent=0)
    host, port = host_port(node.address)
    attackers = [f"127.0.6.{i}" for i in range(1, 21)]
    legit = [f"127.0.1.{i}" for i in range(1, 11)]
    try:
        until = time.monotonic() + 6
        attack_stats = {s: SourceStats() for s in attackers}
        legit_stats = {s: SourceStats() for s in legit}

        async def paced(source: str) -> None:
            while time.monotonic() < until:
                await connect_loop(host, port, source, min(until, time.monotonic() + 0.01), legit_stats[source])
                await asyncio.sleep(0.25)

        await asyncio.gather(
            *(connect_loop(host, port, s, until, attack_stats[s]) for s in attackers), *(paced(s) for s in legit)
        )
        stats = await node.stats()
    finally:
        await node.stop(forget=True)
    attempts = sum(s.sent for s in attack_stats.values())
    served = [s.ok / 6 for s in attack_stats.values()]
    legit_sent, legit_ok = sum(s.sent for s in legit_stats.values()), sum(s.ok for s in legit_stats.values())
    print(f"SYN mode (TCP proxy; connect flood from 20 sources for 6 s; limit {limit} new connections/s per source)")
    print(
        f"  attack connections : {attempts} attempted ({attempts / 6 / 20:.0f}/s per source); served per source: max {max(served):.1f}/s, median {statistics.median(served):.1f}/s"
    )
    print(
        f"  legitimate success : {legit_ok}/{legit_sent} = {100 * legit_ok / max(1, legit_sent):.2f}% (4 connections/s per source)"
    )
    print(
        f"  node counters      : {stats['packets_processed']} connections, {stats['attacks_blocked']} refused; kernel tcp_syncookies: {_syncookies()}"
    )


async def waf(origin: str) -> None:
    print("WAF (labelled corpus: tests/data/mitigation/waf_corpus.json)")
    for level in (1, 2):
        node = await start_node(origin, paranoia=level, flood_rps=10**6, log_sample_percent=0)
        try:
            result = await evaluate(node.address)
        finally:
            await node.stop(forget=True)
        print(
            f"  paranoia {level}: detection {100 * result.detection_rate:.2f}% ({result.detected}/{result.attacks}), "
            f"false positives {100 * result.false_positive_rate:.2f}% ({result.false_positives}/{result.benign})"
        )


async def propagate(origin: str) -> None:
    import httpx
    from pydantic import SecretStr

    from actors.mitigation.fleet import MitigationFleet
    from actors.mitigation.settings import FleetSettings, NodeSettings
    from deployments.mitigation.app import create_app
    from deployments.mitigation.config import MitigationConfig
    from deployments.mitigation.state import MitigationState
    from rayfleet import state
    from rayfleet.state import LocalActorHandle

    key = os.urandom(24).hex()
    settings = FleetSettings(initial_nodes=3, node=NodeSettings(origin=origin, log_sample_percent=0))
    fleet = MitigationFleet(settings, name="bench-fleet")
    handle = LocalActorHandle(fleet)
    config = MitigationConfig(fleet=settings, api_key=SecretStr(key))
    app = create_app(config, MitigationState(config, handle))
    timings = []
    with state.local_state():
        await handle.ensure_started.remote()
        api = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://m", headers={"X-Service-API-Key": key}
        )
        probe = httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_keepalive_connections=0))
        try:
            addresses = [e.address for e in fleet.nodes.values()]
            for trial in range(10):
                marker = f"propagation-marker-{trial}"
                started = time.perf_counter()
                await api.post("/api/v1/rules", json={"pattern": marker, "action": "block", "severity": "high"})
                pending = set(addresses)
                while pending:
                    for address in list(pending):
                        if (await probe.get(f"http://{address}/{marker}")).status_code == 403:
                            pending.discard(address)
                timings.append(time.perf_counter() - started)
        finally:
            await api.aclose()
            await probe.aclose()
            await fleet.shutdown()
    print("rule propagation (POST /api/v1/rules on the orchestrator -> 403 on every node of a 3-node fleet, 10 rules)")
    print(f"  median {statistics.median(timings) * 1000:.1f} ms, max {max(timings) * 1000:.1f} ms")


async def main(only: list[str]) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    with static_origin_process() as (origin, pid):
        print(f"origin: HAProxy static `http-request return` at {origin}; loopback only\n")
        for name in only:
            await {
                "clean": lambda: clean(origin, pid),
                "flood": lambda: flood(origin),
                "slowloris": lambda: slowloris(origin),
                "syn": lambda: syn(origin),
                "waf": lambda: waf(origin),
                "propagate": lambda: propagate(origin),
            }[name]()
            print()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated: " + ",".join(SCENARIOS))
    chosen = [s for s in parser.parse_args().only.split(",") if s]
    unknown = set(chosen) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    asyncio.run(main(chosen))
