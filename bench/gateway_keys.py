"""LLM gateway benchmark with virtual keys and spend on: 2xx/s against LiteLLM, and how long a key
change takes to hold on another replica.

Throughput, one run: the upstream (HAProxy answering an OpenAI-compatible completion or stream from
memory, as in bench/llm_gateway.py) and one gateway process (``create_app`` under uvicorn, one worker,
in-process actor stand-ins, security pipeline on, the request records in SQLite), driven by wrk at 16
and 64 connections, JSON and SSE, with
- a virtual key that has every limit on (rpm, tpm, daily and total budget, a team): each request goes
  through the key's rpm and tpm buckets and budget lease, is charged from the upstream's usage and
  written to the spend records;
- an environment key on the same gateway (no per-key work), for the cost of the key's work;
- LiteLLM's proxy (2 workers, bench/.venv-litellm) with its master key, pointed at the same upstream.
  LiteLLM's own virtual keys need its Prisma client, whose engines are downloaded from outside the
  package registries, so the peer runs without them: it does less per request than the gateway here.
Only 2xx answers count. Afterwards ``/api/v1/spend`` must hold one record per answered request of the key.

Key change → enforcement: two gateway replicas served in this process (sharing the actor stand-ins,
as two Serve replicas share the named actors); a key is created, then revoked, on replica 1 while
replica 2 is asked every 10 ms; the time until replica 2 answers 200 (new key) and then 401 (revoked
key) is measured ``--trials`` times.

Usage: python bench/gateway_keys.py [--seconds 6] [--skip-litellm] [--trials 20]
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
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from llm_gateway import BODY, check_answer, start_litellm, start_upstream, stop  # noqa: E402
from llm_gateway_pipeline import ADMIN, KEY, start_gateway  # noqa: E402
from load import ratio  # noqa: E402
from wrk_load import WrkResult, wrk_run  # noqa: E402

from rayfleet.launcher import Launched, free_port  # noqa: E402

CLIENTS = (16, 64)
MODES = (("json", False), ("sse", True))
KEY_FIELDS = {
    "name": "bench",
    "team": "bench",
    "rpm": 1_000_000,
    "tpm": 1_000_000_000,
    "budget_daily": 1_000_000.0,
    "budget_total": 100_000_000.0,
}


def make_key(admin_base: str, fields: dict[str, Any]) -> dict[str, Any]:
    r = httpx.post(
        admin_base + "/keys", json=fields, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30, trust_env=False
    )
    r.raise_for_status()
    made: dict[str, Any] = r.json()
    return made


def drive(base: str, key: str | None, c: int, seconds: float, stream: bool) -> WrkResult:
    body = dict(BODY, stream=True) if stream else BODY
    check_answer(base, key, stream)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return wrk_run(
        base + "/chat/completions", c, seconds, method="POST", body=json.dumps(body).encode(), headers=headers
    )


def spend_of(admin_base: str, key_id: str) -> dict[str, Any]:
    r = httpx.get(
        admin_base + "/spend",
        params={"key_id": key_id},
        headers={"Authorization": f"Bearer {ADMIN}"},
        timeout=30,
        trust_env=False,
    )
    r.raise_for_status()
    data: list[dict[str, Any]] = r.json()["data"]
    return data[0] if data else {"requests": 0, "cost_usd": 0.0}


async def enforcement(work: Path, upstream: int, trials: int) -> tuple[list[float], list[float]]:
    """Seconds from a key's creation / revocation on replica 1 to replica 2 answering 200 / 401."""
    import uvicorn
    from llm_gateway_pipeline import gateway_config

    from deployments.llm_gateway.app import create_app
    from deployments.llm_gateway.config import GatewayConfig

    os.environ.update(LLM_PROXY_API_KEYS=KEY, LLM_PROXY_ADMIN_KEYS=ADMIN)
    data = work / "replicas"
    data.mkdir()
    config = GatewayConfig.model_validate(gateway_config(data, upstream, security=True))
    servers, urls = [], []
    for _ in range(2):
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning"))
        servers.append((server, asyncio.get_running_loop().create_task(server.serve())))
        urls.append(f"http://127.0.0.1:{port}")
    while not all(s.started for s, _ in servers):
        await asyncio.sleep(0.05)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    created, revoked = [], []
    try:
        async with httpx.AsyncClient(timeout=30, trust_env=False) as client:

            async def until(status: int, key: str, since: float) -> float:
                while True:
                    r = await client.post(
                        urls[1] + "/v1/chat/completions", json=BODY, headers={"Authorization": f"Bearer {key}"}
                    )
                    if r.status_code == status:
                        return time.perf_counter() - since
                    await asyncio.sleep(0.01)

            for i in range(trials):
                t0 = time.perf_counter()
                r = await client.post(urls[0] + "/api/v1/keys", json={"name": f"t{i}", "rpm": 1000}, headers=admin)
                key = r.json()
                created.append(await until(200, key["key"], t0))
                t1 = time.perf_counter()
                await client.delete(urls[0] + f"/api/v1/keys/{key['id']}", headers=admin)
                revoked.append(await until(401, key["key"], t1))
    finally:
        for server, _ in servers:
            server.should_exit = True
        for _, task in servers:
            await task
    return created, revoked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--skip-litellm", action="store_true")
    parser.add_argument("--litellm-workers", type=int, default=2)
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    results: dict[tuple[str, str, int], WrkResult] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        upstream, up_port = start_upstream(work)
        procs: list[subprocess.Popen[bytes] | Launched] = [upstream]
        try:
            for mode, stream in MODES:
                for c in CLIENTS:
                    r = drive(f"http://127.0.0.1:{up_port}/v1", None, c, args.seconds, stream)
                    results[("upstream", mode, c)] = r
                    print(r.row(f"upstream (HAProxy) {mode}", c), flush=True)
            gw, base = start_gateway(work, up_port, security=True, name="keys")
            procs.append(gw)
            key = make_key(base.removesuffix("/v1") + "/api/v1", KEY_FIELDS)
            for mode, stream in MODES:
                for c in CLIENTS:
                    for name, secret in (("virtual key", key["key"]), ("env key", KEY)):
                        r = drive(base, secret, c, args.seconds, stream)
                        results[(name, mode, c)] = r
                        print(r.row(f"gateway, {name}, {mode}", c), flush=True)
            time.sleep(1.0)  # the records' flush interval is 0.5 s
            spent = spend_of(base.removesuffix("/v1") + "/api/v1", key["id"])
            answered = sum(
                results[("virtual key", m, c)].requests - results[("virtual key", m, c)].non_2xx
                for m, _ in MODES
                for c in CLIENTS
            )
            stop(gw)
            procs.remove(gw)
            created, revoked = asyncio.run(enforcement(work, up_port, args.trials))
            if not args.skip_litellm:
                try:
                    ll_proc, ll_base, ll_key = start_litellm(work, up_port, args.litellm_workers)
                except SystemExit as exc:  # it did not start: the gateway's figures still stand, without the ratio
                    print(f"LiteLLM not measured: {exc}", flush=True)
                else:
                    procs.append(ll_proc)
                    for mode, stream in MODES:
                        for c in CLIENTS:
                            r = drive(ll_base, ll_key, c, args.seconds, stream)
                            results[("litellm", mode, c)] = r
                            print(r.row(f"LiteLLM {mode}", c), flush=True)
        finally:
            for proc in reversed(procs):
                stop(proc)
    print()
    print("load: wrk (2 threads), 2xx answers only; gateway: one uvicorn worker, security on, SQLite records")
    print(
        f"{'mode':<5} {'c':>3} {'upstream':>9} {'vkey rps':>9} {'env rps':>9} {'litellm':>9} "
        f"{'up/vkey':>8} {'vkey/env':>8} {'vkey/ll':>8}"
    )
    for mode, _ in MODES:
        for c in CLIENTS:
            up, vk, env = (results[(n, mode, c)] for n in ("upstream", "virtual key", "env key"))
            ll = results.get(("litellm", mode, c))
            print(
                f"{mode:<5} {c:>3} {up.rps:9.0f} {vk.rps:9.1f} {env.rps:9.1f} "
                f"{ll.rps if ll else float('nan'):9.1f} {ratio(up.rps, vk.rps):>8} "
                f"{vk.rps / env.rps if env.rps else float('nan'):8.2f} {ratio(vk.rps, ll.rps) if ll else 'n/a':>8}"
            )
    print(
        f"spend records of the virtual key: {spent['requests']} for {answered} 2xx answers seen by wrk "
        f"(requests in flight when wrk stopped are answered and recorded too), ${spent['cost_usd']:.6f}"
    )
    for label, values in (("new key usable", created), ("revoked key refused", revoked)):
        values = sorted(values)
        print(
            f"key change on replica 1 -> {label} on replica 2 ({len(values)} trials): "
            f"p50 {statistics.median(values) * 1000:.0f} ms, max {values[-1] * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
