"""LLM gateway benchmark: rayfleet's gateway (through Serve and on its direct listener) vs
LiteLLM's proxy, same upstream.

One process tree on this machine: the upstream double, `rayfleet up --only llm_gateway`
pointed at it (environment overrides of config/llm_gateway.yaml; the direct listener,
`server.port`, on a free port), and LiteLLM's proxy
(installed into bench/.venv-litellm on first run, never into the project venv) pointed
at the same double. Each is driven at 16 and 64 concurrent clients, non-streaming and
streaming, and so is the upstream alone; overhead = gateway latency - upstream latency
at the same percentile. Prints requests/s, p50/p99, overhead and the ratios.

Usage: python bench/llm_gateway.py [--seconds 6] [--skip-litellm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import Result, ratio, run  # noqa: E402

from rayfleet.launcher import Launched, free_port, launch  # noqa: E402

LITELLM_VENV = ROOT / "bench" / ".venv-litellm"
MODEL = "bench-model"
BODY = {"model": MODEL, "messages": [{"role": "user", "content": "Say hello to the benchmark."}], "max_tokens": 16}


def wait_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{what} did not open port {port}")


def stop(proc: subprocess.Popen | Launched) -> None:
    if isinstance(proc, Launched):
        proc.stop()
        return
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=90)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def start_double(workdir: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "deployments.llm_gateway.testing.upstream_double",
            "--port",
            str(port),
            "--name",
            "bench",
            "--models",
            MODEL,
        ],
        cwd=ROOT,
        stdout=open(workdir / "double.log", "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_port(port, proc, "upstream double")
    return proc, port


def start_rayfleet(workdir: Path, upstream: int) -> tuple[Launched, str, str, str]:
    direct_port = free_port()
    env = {
        "RAYFLEET_LOG_LEVEL": "WARNING",
        "LLM_GATEWAY__ENDPOINTS__BENCH__BASE_URL": f"http://127.0.0.1:{upstream}/v1",
        "LLM_GATEWAY__ENDPOINTS__BENCH__MODELS": json.dumps([MODEL]),
        "LLM_GATEWAY__CACHING__ENABLED": "false",
        "LLM_GATEWAY__RATE_LIMITING__REQUESTS_PER_MINUTE": "10000000",
        "LLM_GATEWAY__BUDGET__DAILY_LIMIT": "1000000",
        "LLM_GATEWAY__BUDGET__SOFT_LIMIT": "1000000",
        "LLM_GATEWAY__CONNECTION_POOL__MAX_PER_HOST": "200",
        "LLM_GATEWAY__CONNECTION_POOL__MAX_CONNECTIONS": "200",
        "LLM_GATEWAY__DISCOVERY": "false",
        "LLM_GATEWAY__SERVER__HOST": "127.0.0.1",
        "LLM_GATEWAY__SERVER__PORT": str(direct_port),
        "LLM_GATEWAY__SERVER__LISTENER__ENABLED": "true",
    }
    launched = launch(workdir / "rf", ["llm_gateway"], env=env, cwd=ROOT, timeout=300)
    wait_listener(launched.base_url + "/llm/health", f"http://127.0.0.1:{direct_port}")
    return (
        launched,
        launched.base_url + "/llm/v1",
        f"http://127.0.0.1:{direct_port}/v1",
        launched.secrets["LLM_PROXY_API_KEYS"].split(",")[0],
    )


def wait_listener(health: str, url: str, timeout: float = 60) -> None:
    """The replicas start the direct listener; wait until /llm/health says it serves `url`."""
    import httpx

    deadline = time.monotonic() + timeout
    view: dict = {}
    while time.monotonic() < deadline:
        view = httpx.get(health, trust_env=False, timeout=10).json().get("listener", {})
        if view.get("state") == "serving":
            if view.get("url") != url:
                raise SystemExit(f"direct listener serves {view.get('url')}, expected {url}")
            return
        time.sleep(0.5)
    raise SystemExit(f"direct listener not serving: {view}")


def ensure_litellm() -> Path:
    exe = LITELLM_VENV / "bin" / "litellm"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(LITELLM_VENV)], check=True)
        subprocess.run([str(LITELLM_VENV / "bin" / "pip"), "install", "-q", "litellm[proxy]"], check=True)
    return exe


def start_litellm(workdir: Path, upstream: int, workers: int) -> tuple[subprocess.Popen, str, str]:
    exe = ensure_litellm()
    port = free_port()
    key = "sk-bench-litellm"
    cfg = workdir / "litellm.yaml"
    cfg.write_text(
        json.dumps(
            {
                "model_list": [
                    {
                        "model_name": MODEL,
                        "litellm_params": {
                            "model": f"openai/{MODEL}",
                            "api_base": f"http://127.0.0.1:{upstream}/v1",
                            "api_key": "sk-upstream",
                        },
                    }
                ],
                "general_settings": {"master_key": key},
                "litellm_settings": {"drop_params": True, "telemetry": False},
            }
        )
    )
    env = dict(os.environ, LITELLM_LOG="ERROR", LITELLM_TELEMETRY="False")
    proc = subprocess.Popen(
        [str(exe), "--config", str(cfg), "--host", "127.0.0.1", "--port", str(port), "--num_workers", str(workers)],
        env=env,
        cwd=workdir,
        stdout=open(workdir / "litellm.log", "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_port(port, proc, "litellm", timeout=300)
    time.sleep(3)
    return proc, f"http://127.0.0.1:{port}/v1", key


async def drive(label: str, base: str, key: str | None, c: int, seconds: float, stream: bool) -> Result:
    body = dict(BODY, stream=True) if stream else BODY
    headers = {"Authorization": f"Bearer {key}"} if key else None

    def ok(resp) -> bool:
        return resp.status_code == 200 and (not stream or resp.text.rstrip().endswith("[DONE]"))

    return await run(
        label,
        base + "/chat/completions",
        c,
        seconds,
        method="POST",
        make_kwargs=lambda i: {"json": body},
        ok=ok,
        headers=headers,
    )


async def header_overhead(base: str, key: str, n: int = 200) -> tuple[float, float]:
    import httpx

    values = []
    async with httpx.AsyncClient(timeout=30, trust_env=False, headers={"Authorization": f"Bearer {key}"}) as client:
        for _ in range(n):
            r = await client.post(base + "/chat/completions", json=BODY)
            values.append(float(r.headers["x-rayfleet-overhead-ms"]))
    values.sort()
    return values[len(values) // 2], values[min(len(values) - 1, int(0.99 * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--skip-litellm", action="store_true")
    parser.add_argument("--litellm-workers", type=int, default=2)
    args = parser.parse_args()
    results: dict[tuple[str, str, int], Result] = {}
    modes = (("json", False), ("stream", True))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        double, up_port = start_double(work)
        targets: list[tuple[str, subprocess.Popen | None, str, str | None]] = [
            ("upstream", None, f"http://127.0.0.1:{up_port}/v1", None)
        ]
        procs: list[subprocess.Popen | Launched] = [double]
        try:
            rf_proc, rf_base, rf_direct, rf_key = start_rayfleet(work, up_port)
            procs.append(rf_proc)
            targets.append(("rayfleet", rf_proc, rf_base, rf_key))
            targets.append(("direct", rf_proc, rf_direct, rf_key))
            for name, _, base, key in targets:
                for mode, stream in modes:
                    for c in (16, 64):
                        label = {"rayfleet": "rayfleet via Serve", "direct": "rayfleet direct"}.get(name, name)
                        r = asyncio.run(drive(f"{label} {mode}", base, key, c, args.seconds, stream))
                        results[(name, mode, c)] = r
                        print(r.row(), flush=True)
            for label, base in (("via Serve", rf_base), ("direct", rf_direct)):
                p50, p99 = asyncio.run(header_overhead(base, rf_key))
                print(
                    f"rayfleet {label} x-rayfleet-overhead-ms header (sequential): p50 {p50:.2f} ms  p99 {p99:.2f} ms"
                )
            rf_proc.stop()
            if not args.skip_litellm:
                ll_proc, ll_base, ll_key = start_litellm(work, up_port, args.litellm_workers)
                procs.append(ll_proc)
                for mode, stream in modes:
                    for c in (16, 64):
                        r = asyncio.run(drive(f"litellm {mode}", ll_base, ll_key, c, args.seconds, stream))
                        results[("litellm", mode, c)] = r
                        print(r.row(), flush=True)
        finally:
            for proc in reversed(procs):
                stop(proc)
    print()
    print("via Serve: <serve>/llm/v1 (proxy hop); direct: http://127.0.0.1:<server.port>/v1 (gateway's own port)")
    print(
        f"{'mode':<7} {'c':>3} {'serve rps':>10} {'direct rps':>10} {'litellm rps':>11} {'serve/ll':>8} "
        f"{'direct/ll':>9} {'serve ovh p50/p99':>17} {'direct ovh p50/p99':>18} {'ll ovh p50/p99':>15}"
    )

    def ovh(r: Result | None, up: Result) -> str:
        return f"{r.pct(50) - up.pct(50):.1f}/{r.pct(99) - up.pct(99):.1f}" if r else "n/a"

    for mode, _ in modes:
        for c in (16, 64):
            up = results[("upstream", mode, c)]
            rf = results[("rayfleet", mode, c)]
            dr = results[("direct", mode, c)]
            ll = results.get(("litellm", mode, c))
            print(
                f"{mode:<7} {c:>3} {rf.rps:10.1f} {dr.rps:10.1f} {ll.rps if ll else float('nan'):11.1f} "
                f"{ratio(rf.rps, ll.rps) if ll else 'n/a':>8} {ratio(dr.rps, ll.rps) if ll else 'n/a':>9} "
                f"{ovh(rf, up):>17} {ovh(dr, up):>18} {ovh(ll, up):>15}"
            )


if __name__ == "__main__":
    main()
