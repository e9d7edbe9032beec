"""LLM gateway benchmark of issue 16: the cost of the security pipeline, the gateway's own
overhead, and the injection scorer's detection and false-positive rates.

One process tree on this machine, loopback only: the upstream double, and two gateway
processes built from the same configuration (``create_app`` under uvicorn, one worker,
in-process actor stand-ins) except for ``security.enabled``: on (payload/messages/depth
limits, threat ledger, injection scan, link sanitization with a blocked domain) and off.
Each is driven by wrk at 16 connections, non-streaming, alternately four times (the median
of the four runs counts); the upstream (HAProxy answering from memory, as in bench/llm_gateway.py)
alone is driven too, so it is shown to be well over 10x faster than what it serves. Then:

- overhead: ``x-rayfleet-overhead-ms`` (gateway time minus upstream time) of 2,000
  sequential requests against each gateway, p50 and p99 (a p99 of 300 samples is the
  third-worst one, which a single stall decides);
- detection: every prompt of ``tests/data/llm_gateway/injection_labelled.jsonl`` sent to
  the security-on gateway; an attack answered 403 ``injection_blocked`` is detected, a
  benign prompt so answered is a false positive.

Only 200 answers count as throughput. Bounded: fixed seconds per run, fixed counts.

Usage: python bench/llm_gateway_pipeline.py [--seconds 5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from llm_gateway import check_answer, start_upstream, stop, wait_port  # noqa: E402
from load import ratio  # noqa: E402
from wrk_load import WrkResult, wrk_run  # noqa: E402

from rayfleet.launcher import free_port  # noqa: E402

MODEL = "bench-model"
KEY = "sk-bench-inference-0123456789"
ADMIN = "sk-bench-admin-0123456789"
PROMPT = (
    "You are reviewing a pull request. Summarise the change below in three bullet points and say whether "
    "the tests cover it. The diff adds a retry loop around the HTTP client, with a jittered delay, and "
    "documents it at https://docs.example.test/retries. " * 4
)
BODY = {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 16}
ROUNDS = 4  # alternating on/off runs per gateway; single runs here move by +-10 %
LABELLED = ROOT / "tests" / "data" / "llm_gateway" / "injection_labelled.jsonl"


def gateway_config(
    workdir: Path, upstream: int, security: bool, observability: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "data_dir": str(workdir),
        "discovery": False,
        "endpoints": {"bench": {"base_url": f"http://127.0.0.1:{upstream}/v1", "models": [MODEL]}},
        "caching": {"enabled": False},
        "rate_limiting": {"requests_per_minute": 10_000_000},
        "budget": {"daily_limit": 1_000_000, "soft_limit": 1_000_000},
        "connection_pool": {"max_connections": 200, "max_per_host": 200},
        "observability": observability or {"tracing": {"console_exporter": False}},
        "security": {
            "enabled": security,
            "link_sanitization": {"blocked_domains": ["evil.test", "malware.test"]},
            "threat_ledger": {"threshold": 1_000_000},  # the detection pass must not block the bench client
        },
    }


def serve(config_path: str, port: int) -> None:
    """Child mode: one gateway process on ``port``."""
    import uvicorn

    from deployments.llm_gateway.app import create_app
    from deployments.llm_gateway.config import GatewayConfig

    cfg = GatewayConfig.model_validate(json.loads(Path(config_path).read_text()))
    uvicorn.run(create_app(cfg), host="127.0.0.1", port=port, log_level="warning", access_log=False)


def start_gateway(
    workdir: Path,
    upstream: int,
    security: bool,
    name: str | None = None,
    observability: dict[str, Any] | None = None,
) -> tuple[subprocess.Popen, str]:
    name = name or ("on" if security else "off")
    data = workdir / name
    data.mkdir()
    cfg_path = workdir / f"{name}.json"
    cfg_path.write_text(json.dumps(gateway_config(data, upstream, security, observability)))
    port = free_port()
    env = dict(os.environ, LLM_PROXY_API_KEYS=KEY, LLM_PROXY_ADMIN_KEYS=ADMIN, RAYFLEET_LOG_LEVEL="WARNING")
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(cfg_path), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=open(workdir / f"{name}.log", "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_port(port, proc, f"gateway ({name})")
    return proc, f"http://127.0.0.1:{port}/v1"


def drive(base: str, key: str | None, c: int, seconds: float) -> WrkResult:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    check_answer(base, key, stream=False)
    return wrk_run(
        base + "/chat/completions", c, seconds, method="POST", body=json.dumps(BODY).encode(), headers=headers
    )


async def overhead(base: str, n: int = 2000) -> tuple[float, float]:
    values = []
    async with httpx.AsyncClient(timeout=30, trust_env=False, headers={"Authorization": f"Bearer {KEY}"}) as client:
        for _ in range(n):
            r = await client.post(base + "/chat/completions", json=BODY)
            r.raise_for_status()
            values.append(float(r.headers["x-rayfleet-overhead-ms"]))
    values.sort()
    return values[len(values) // 2], values[min(len(values) - 1, int(0.99 * len(values)))]


async def plugin_latency(name: str, base: str) -> None:
    """The gateway's own per-ring and per-plugin p50 (last 500 requests), from its latency board."""
    async with httpx.AsyncClient(timeout=30, trust_env=False, headers={"Authorization": f"Bearer {ADMIN}"}) as client:
        view = (await client.get(base.removesuffix("/v1") + "/api/v1/metrics/latency")).json()
    rings = "  ".join(f"{ring} {v['p50']:.3f}" for ring, v in view["rings"].items())
    print(f"  security {name}, ring p50 (ms): {rings}")
    plugins = ("request_limits", "injection_scan", "link_sanitizer", "threat_ledger")
    print(
        "  " + "  ".join(f"{p} {view['plugins'][p]['percentiles']['p50']:.3f}" for p in plugins if p in view["plugins"])
    )


async def detection(base: str) -> dict[str, tuple[int, int]]:
    rows = [json.loads(line) for line in LABELLED.open()]
    counts: dict[str, list[int]] = {"attack": [0, 0], "benign": [0, 0]}
    async with httpx.AsyncClient(timeout=30, trust_env=False, headers={"Authorization": f"Bearer {KEY}"}) as client:
        for row in rows:
            body = {"model": MODEL, "messages": [{"role": "user", "content": row["text"]}], "max_tokens": 4}
            r = await client.post(base + "/chat/completions", json=body)
            blocked = r.status_code == 403 and r.json()["error"]["code"] == "injection_blocked"
            if r.status_code not in (200, 403):
                raise SystemExit(f"unexpected {r.status_code}: {r.text[:200]}")
            counts[row["label"]][0] += int(blocked)
            counts[row["label"]][1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}


async def bench(base_on: str, base_off: str, upstream: str, c: int, seconds: float) -> None:
    up = drive(upstream, None, c, seconds)
    print(up.row("upstream (HAProxy) alone", c), flush=True)
    runs: dict[str, list[WrkResult]] = {"on": [], "off": []}
    for _ in range(ROUNDS):
        for name, base in (("on", base_on), ("off", base_off)):
            runs[name].append(drive(base, KEY, c, seconds))
            print(runs[name][-1].row(f"gateway, security {name}", c), flush=True)
    on = statistics.median(r.rps for r in runs["on"])
    off = statistics.median(r.rps for r in runs["off"])
    print(f"\nthroughput (2xx), security on / off (median of {ROUNDS}): {on:.1f} / {off:.1f} req/s = {ratio(on, off)}")
    print(f"  drop with the security pipeline: {100 * (1 - on / off):.1f} %  (goal <= 15 %)")
    print(f"  upstream / gateway (off): {ratio(up.rps, off)}  (must be >= 10x)")
    for name, base in (("on", base_on), ("off", base_off)):
        p50, p99 = await overhead(base)
        print(f"gateway overhead (x-rayfleet-overhead-ms), security {name}: p50 {p50:.2f} ms  p99 {p99:.2f} ms")
        await plugin_latency(name, base)
    counts = await detection(base_on)
    hit, attacks = counts["attack"]
    fp, benign = counts["benign"]
    print(f"injection detection through HTTP: {hit}/{attacks} attacks blocked = {100 * hit / attacks:.1f} %")
    print(f"false positives: {fp}/{benign} ordinary prompts blocked = {100 * fp / benign:.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    with tempfile.TemporaryDirectory(prefix="gw-pipeline-bench-") as tmp:
        workdir = Path(tmp)
        double, upstream = start_upstream(workdir)
        procs = [double]
        try:
            on_proc, base_on = start_gateway(workdir, upstream, security=True)
            procs.append(on_proc)
            off_proc, base_off = start_gateway(workdir, upstream, security=False)
            procs.append(off_proc)
            asyncio.run(bench(base_on, base_off, f"http://127.0.0.1:{upstream}/v1", args.concurrency, args.seconds))
        finally:
            for proc in reversed(procs):
                stop(proc)


if __name__ == "__main__":
    main()
