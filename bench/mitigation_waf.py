"""The WAF of a mitigation node: HAProxy's regular-expression rules vs the CRS inspection tier.

Both run in the same process against the same static HAProxy origin (loopback only):
  (a) the HAProxy-only node, `waf.engine: rules` at paranoia 2 (URL and headers, no bodies);
  (b) HAProxy in front of nginx + ModSecurity + OWASP CRS and the tier's local rules
      (rayfleet/crs/local_rules.py), `waf.engine: crs` at paranoia level 2, with CRS's defaults and
      with the exclusions chosen on the dev split (rayfleet.crs.config.PROSE_EXCLUSIONS).
Figures:
  detection and false positives of each, per split (dev, heldout) of
      tests/data/mitigation/crs_corpus.json (made by tests/data/mitigation/make_crs_corpus.py);
  CPU per request of each node (HAProxy, plus nginx for crs, from /proc) and of the origin over
      the same ordinary requests (GET pages, form, JSON, XML and multipart posts), 2xx only, and
      the ratios crs / HAProxy-only and node / origin.
Every loop is bounded; about two minutes in all.

Usage: python bench/mitigation_waf.py [--requests 1500] [--concurrency 8] [--paranoia 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from actors.mitigation.node import MitigationNode  # noqa: E402
from actors.mitigation.node_monitor import _proc_usage  # noqa: E402
from rayfleet.crs.config import PROSE_EXCLUSIONS  # noqa: E402
from tests.actors.mitigation.origin import static_origin_process  # noqa: E402
from tests.actors.mitigation.waf_eval import (  # noqa: E402
    SplitResults,
    bench_arguments,
    evaluate_splits,
    load_crs_corpus,
    send,
)


def engines(paranoia: int) -> dict[str, dict[str, Any]]:
    return {
        "haproxy-rules": {"waf": {"engine": "rules"}, "paranoia": paranoia},
        "crs": {"waf": {"engine": "crs", "paranoia_level": paranoia, "ban_after": 0}},
        "crs + exclusions": {
            "waf": {"engine": "crs", "paranoia_level": paranoia, "ban_after": 0, "exclusions": list(PROSE_EXCLUSIONS)}
        },
    }


async def start_node(origin: str, settings: dict[str, Any]) -> MitigationNode:
    node = MitigationNode("bench-waf", {"origin": origin, "flood_rps": 10**6, "log_sample_percent": 0, **settings})
    await node.start()
    return node


def node_pids(node: MitigationNode) -> list[int]:
    return node.proc.process_ids() + node.inspection.process_ids()


async def load(address: str, items: list[dict[str, Any]], total: int, concurrency: int) -> int:
    """`total` ordinary requests over `concurrency` keep-alive clients; the 2xx answers."""
    cycle = itertools.cycle(items)
    ok = 0
    remaining = total

    async def worker() -> None:
        nonlocal ok, remaining
        async with httpx.AsyncClient(trust_env=False, timeout=10.0) as client:
            while remaining > 0:
                remaining -= 1
                status = await send(client, address, next(cycle))  # read `ok` only after the await
                ok += 200 <= status < 300

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ok


async def measure(
    origin: tuple[str, int], name: str, settings: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    corpus = load_crs_corpus()
    node = await start_node(origin[0], settings)
    try:
        results = await evaluate_splits(node.address, corpus)
        benign = [c for c in corpus if c["label"] == "benign"]
        await load(node.address, benign, 100, args.concurrency)  # warm up
        pids = node_pids(node)
        n0, o0 = _proc_usage(pids)[0], _proc_usage([origin[1]])[0]
        ok = await load(node.address, benign, args.requests, args.concurrency)
        node_cpu, origin_cpu = _proc_usage(pids)[0] - n0, _proc_usage([origin[1]])[0] - o0
    finally:
        await node.stop(forget=True)
    return {
        "name": name,
        "results": results,
        "ok": ok,
        "node_us": 1e6 * node_cpu / max(1, ok),
        "origin_us": 1e6 * origin_cpu / max(1, ok),
    }


def report(figures: dict[str, Any]) -> None:
    results: SplitResults = figures["results"]
    print(f"{figures['name']}:")
    for split in ("dev", "heldout"):
        r = results.of(split)
        print(
            f"  {split:8} detection {100 * r.detection_rate:6.2f} % ({r.detected}/{r.attacks})   "
            f"false positives {100 * r.false_positive_rate:5.2f} % ({r.false_positives}/{r.benign})"
        )
    print(f"  errors (5xx or no answer, not counted): {results.errors}")
    print(
        f"  CPU per ordinary request: node {figures['node_us']:.1f} us, origin {figures['origin_us']:.1f} us "
        f"({figures['ok']} answered 2xx); node / origin x{figures['node_us'] / max(figures['origin_us'], 1e-9):.1f}"
    )


def missed_by_category(results: SplitResults, split: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in results.of(split).missed:
        category = line.split("/", 1)[0]
        counts[category] = counts.get(category, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


async def main(args: argparse.Namespace) -> None:
    with static_origin_process() as origin:
        print(f"origin: HAProxy static `http-request return` at {origin[0]}; loopback only; paranoia {args.paranoia}")
        print(f"load: {args.requests} ordinary requests (corpus benign items), {args.concurrency} keep-alive clients\n")
        measured = [await measure(origin, name, s, args) for name, s in engines(args.paranoia).items()]
    for figures in measured:
        report(figures)
        print(f"  missed on dev, by category: {missed_by_category(figures['results'], 'dev')}")
        print()
    rules, crs = measured[0], measured[-1]
    for other in measured[1:]:
        ratio = other["node_us"] / max(rules["node_us"], 1e-9)
        print(f"CPU per request, {other['name']} / HAProxy-only: x{ratio:.1f}")
    if args.show_misses:
        crs["results"].print_dev_misses()


if __name__ == "__main__":
    asyncio.run(main(bench_arguments(__doc__).parse_args()))
