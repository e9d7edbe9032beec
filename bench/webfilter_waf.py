"""The web filter's WAF engines on the labelled CRS corpus, and what each costs, in one run.

Three data planes (real Squid + dnsmasq, `actors.webfilter.dataplane`) in front of the same static HAProxy
origin (loopback only), differing only in their WAF:
  (0) none (`enable_waf: false`), the peer of the cost figures;
  (a) `waf_engine: url_regex`, every category (Squid's URL rules);
  (b) `waf_engine: crs`, every category, at `--paranoia` (nginx + ModSecurity + OWASP CRS as Squid's parent).
Figures:
  detection and false positives per split (dev, heldout) of tests/data/mitigation/crs_corpus.json (made by
      tests/data/mitigation/make_crs_corpus.py; the origin answers 200 to everything, so a 4xx is a refusal:
      a 403 policy page, or a 400 of the tier for a body ModSecurity cannot parse or a path nginx refuses;
      5xx or no answer are errors, not counted);
  throughput (2xx answers / s) and CPU per 2xx request (Squid, dnsmasq, and nginx for crs, from /proc) over
      the corpus's ordinary requests (pages, forms, JSON, XML and multipart posts), and each engine's ratio to
      no WAF.
No rule or setting was tuned on the heldout split. About a minute.

Usage: python bench/webfilter_waf.py [--requests 1500] [--concurrency 8] [--paranoia 1] [--show-misses]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from actors.mitigation.node_monitor import _proc_usage  # noqa: E402
from actors.webfilter import waf  # noqa: E402
from actors.webfilter.dataplane import DataPlane, ProxySettings  # noqa: E402
from actors.webfilter.squidconf import Policy  # noqa: E402
from tests.actors.mitigation.origin import static_origin_process  # noqa: E402
from tests.actors.mitigation.waf_eval import SplitResults, bench_arguments, load_crs_corpus, send  # noqa: E402
from tests.deployments.webfilter.conftest import state_folder  # noqa: E402

HOST = "shop.example"  # the corpus's Host; our dnsmasq answers it with the origin's loopback address


def engines(paranoia: int) -> dict[str, Policy]:
    every = list(waf.CATEGORIES)
    return {
        "no WAF": Policy(enable_waf=False),
        "url_regex": Policy(waf_engine="url_regex", waf_categories=every),
        f"crs PL{paranoia}": Policy(waf_engine="crs", waf_categories=every, waf_paranoia_level=paranoia),
    }


def plane_pids(plane: DataPlane) -> list[int]:
    pids = [p.pid for p in (plane.squid, plane.dnsmasq) if p is not None]
    return pids + (plane.crs.process_ids() if plane.crs is not None else [])


async def evaluate(client: httpx.AsyncClient, address: str, corpus: list[dict[str, Any]]) -> SplitResults:
    results = SplitResults()
    for item in corpus:
        status = await send(client, address, item)
        if status == 0 or status >= 500:
            results.errors += 1
            continue
        what = f"{item['category']}/{item['placement']} {item['method']} {item['path'][:100]}"
        results.of(item["split"]).count(item["label"] == "attack", 400 <= status < 500, what)
    return results


async def load(proxy: str, address: str, items: list[dict[str, Any]], total: int, concurrency: int) -> int:
    """`total` ordinary requests over `concurrency` keep-alive clients through the proxy; the 2xx answers."""
    cycle = itertools.cycle(items)
    ok, remaining = 0, total

    async def worker() -> None:
        nonlocal ok, remaining
        async with httpx.AsyncClient(proxy=proxy, trust_env=False, timeout=10.0) as client:
            while remaining > 0:
                remaining -= 1
                status = await send(client, address, next(cycle))
                ok += 200 <= status < 300

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ok


async def measure(origin: tuple[str, int], name: str, policy: Policy, args: argparse.Namespace) -> dict[str, Any]:
    corpus = load_crs_corpus()
    benign = [c for c in corpus if c["label"] == "benign"]
    root = state_folder()
    plane = DataPlane(root, ProxySettings(hosts={HOST: "127.0.0.1"}, cache_mem_mb=8))
    await asyncio.to_thread(plane.start, policy)
    proxy, address = f"http://127.0.0.1:{plane.port}", f"{HOST}:{origin[0].rsplit(':', 1)[1]}"
    try:
        async with httpx.AsyncClient(proxy=proxy, trust_env=False, timeout=10.0) as client:
            results = await evaluate(client, address, corpus)
        await load(proxy, address, benign, 100, args.concurrency)  # warm up
        pids = plane_pids(plane)
        cpu0, origin0, started = _proc_usage(pids)[0], _proc_usage([origin[1]])[0], time.perf_counter()
        ok = await load(proxy, address, benign, args.requests, args.concurrency)
        seconds, cpu = time.perf_counter() - started, _proc_usage(pids)[0] - cpu0
        origin_cpu = _proc_usage([origin[1]])[0] - origin0
    finally:
        await asyncio.to_thread(plane.stop)
        shutil.rmtree(root, ignore_errors=True)
    per = 1e6 / max(1, ok)
    return {
        "name": name,
        "results": results,
        "ok": ok,
        "rps": ok / seconds,
        "cpu_us": cpu * per,
        "origin_us": origin_cpu * per,
    }


def report(figures: dict[str, Any], peer: dict[str, Any]) -> None:
    results: SplitResults = figures["results"]
    print(f"{figures['name']}:")
    if figures is not peer:
        for split in ("dev", "heldout"):
            r = results.of(split)
            print(
                f"  {split:8} detection {100 * r.detection_rate:6.2f} % ({r.detected}/{r.attacks})   "
                f"false positives {100 * r.false_positive_rate:5.2f} % ({r.false_positives}/{r.benign})"
            )
        missed = Counter(line.split("/", 1)[0] for line in results.of("dev").missed)
        print(f"  missed on dev, by corpus category: {dict(missed.most_common())}")
    print(f"  errors (5xx or no answer, not counted): {results.errors}")
    print(
        f"  ordinary load: {figures['ok']} answered 2xx, {figures['rps']:.0f} req/s "
        f"(x{figures['rps'] / peer['rps']:.2f} of no WAF), CPU {figures['cpu_us']:.0f} us/request "
        f"(x{figures['cpu_us'] / max(peer['cpu_us'], 1e-9):.2f} of no WAF); origin {figures['origin_us']:.0f} us/request, "
        f"served path / origin x{figures['cpu_us'] / max(figures['origin_us'], 1e-9):.1f} (goal >= 10)"
    )


async def main(args: argparse.Namespace) -> None:
    with static_origin_process() as origin:
        print(f"origin: HAProxy static `http-request return` at {origin[0]}; loopback only; paranoia {args.paranoia}")
        print(f"load: {args.requests} ordinary requests (corpus benign items), {args.concurrency} keep-alive clients\n")
        measured = [await measure(origin, name, policy, args) for name, policy in engines(args.paranoia).items()]
    for figures in measured:
        report(figures, measured[0])
    if args.show_misses:
        measured[-1]["results"].print_dev_misses()


if __name__ == "__main__":
    asyncio.run(main(bench_arguments(__doc__).parse_args()))
