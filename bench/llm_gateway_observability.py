"""LLM gateway benchmark: the cost of the request export and of tracing on the request path.

Three gateway processes built from the same configuration (``create_app`` under uvicorn,
one worker, in-process actor stand-ins, security pipeline on) except for ``observability``:
``plain`` (tracing without an exporter: no tracer, no middleware; export off), ``export``
(``observability.export`` on, PII scrubbed, in the gateway's data folder) and ``tracing``
(every span sent over OTLP/HTTP to a sink on loopback: HAProxy answering 200). Each is
driven by wrk at 16 connections, non-streaming, in turn, twice (the second round in
reverse order; the median counts); the
upstream (HAProxy answering from memory) alone is driven too, so it is shown to be well
over 10x faster than what it serves. Then ``x-rayfleet-overhead-ms`` of 300 sequential
requests per gateway (p50, p99), and the export's own count: lines written and dropped
(``/health``) against the 2xx answers wrk saw. Only 200 answers count as throughput.

Usage: python bench/llm_gateway_observability.py [--seconds 5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import static_origin
from llm_gateway import start_upstream, stop
from llm_gateway_pipeline import drive, overhead, start_gateway
from load import ratio
from wrk_load import WrkResult

QUIET = {"tracing": {"console_exporter": False}}


SEQUENTIAL = 300  # requests for the overhead percentiles (counted in the export check)


def variants(otlp: int) -> dict[str, dict]:
    return {
        "plain": QUIET,
        "export": {**QUIET, "export": {"enabled": True}},
        "tracing": {"tracing": {"console_exporter": False, "otlp_endpoint": f"http://127.0.0.1:{otlp}"}},
    }


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


async def export_counts(base: str) -> dict:
    async with httpx.AsyncClient(timeout=30, trust_env=False) as client:
        return (await client.get(base.removesuffix("/v1") + "/health")).json()["export"]


async def bench(bases: dict[str, str], upstream: str, c: int, seconds: float) -> None:
    print(f"load average at start: {load_average()}")
    up = drive(upstream, None, c, seconds)
    print(up.row("upstream (HAProxy) alone", c), flush=True)
    runs: dict[str, list[WrkResult]] = {name: [] for name in bases}
    for order in (list(bases), list(reversed(bases))):  # the second round in reverse: no order effect
        for name in order:
            base = bases[name]
            runs[name].append(drive(base, "sk-bench-inference-0123456789", c, seconds))
            print(runs[name][-1].row(f"gateway, {name}", c), flush=True)
    rps = {name: statistics.median(r.rps for r in rs) for name, rs in runs.items()}
    print("\nthroughput (2xx, median of 2): " + ", ".join(f"{n} {v:.1f}" for n, v in rps.items()) + " req/s")
    print(
        f"  export / plain: {ratio(rps['export'], rps['plain'])}   tracing / plain: {ratio(rps['tracing'], rps['plain'])}"
    )
    print(f"  upstream / plain gateway: {ratio(up.rps, rps['plain'])}  (must be >= 10x)")
    for name, base in bases.items():
        p50, p99 = await overhead(base, SEQUENTIAL)
        print(f"gateway overhead (x-rayfleet-overhead-ms), {name}: p50 {p50:.2f} ms  p99 {p99:.2f} ms")
    await asyncio.sleep(1.0)  # the export's last flush
    counts = await export_counts(bases["export"])
    answered = sum(r.requests - r.non_2xx for r in runs["export"])
    print(
        f"export: {counts['written']} lines written, {counts['dropped']} dropped, {counts['queued']} queued; "
        f"wrk saw {answered} 2xx (+ 2 checks + {SEQUENTIAL} sequential; up to c more per run were in flight when wrk stopped)"
    )
    print(f"load average at end: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gw-observability-bench-") as tmp:
        workdir = Path(tmp)
        double, upstream = start_upstream(workdir)
        procs = [double]
        try:
            sink, otlp = static_origin.start(
                workdir / "otlp", [static_origin.Rule("", 200, "application/x-protobuf", b"")], buffer_request=True
            )
            procs.append(sink)
            bases = {}
            for name, obs in variants(otlp).items():
                proc, bases[name] = start_gateway(workdir, upstream, security=True, name=name, observability=obs)
                procs.append(proc)
            asyncio.run(bench(bases, f"http://127.0.0.1:{upstream}/v1", args.concurrency, args.seconds))
        finally:
            for proc in reversed(procs):
                stop(proc)


if __name__ == "__main__":
    main()
