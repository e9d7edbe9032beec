"""LLM gateway benchmark: rayfleet's gateway (through Serve and on its direct listener) vs
LiteLLM's proxy, same upstream, same load generator, one run.

The upstream is HAProxy answering an OpenAI-compatible completion (JSON, or an SSE stream when
the request asks for one) from memory, so it is far faster than either gateway; the bench
measures it alone and prints how many times faster it is. `rayfleet up --only llm_gateway`
points at it (environment overrides of config/llm_gateway.yaml; the direct listener,
`server.port`, on a free port), and so does LiteLLM's proxy (installed into
bench/.venv-litellm on first run, never into the project venv). The load is wrk (a C client)
at 16 and 64 connections, non-streaming and streaming; only 2xx answers count. Each target
first answers one request that is checked for the upstream's complete answer.

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
import static_origin  # noqa: E402
from load import ratio  # noqa: E402
from wrk_load import WrkResult, wrk_run  # noqa: E402

from rayfleet.launcher import Launched, free_port, launch  # noqa: E402

LITELLM_VENV = ROOT / "bench" / ".venv-litellm"
MODEL = "bench-model"
CLIENTS = (16, 64)
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
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def upstream_bodies() -> tuple[bytes, bytes, bytes]:
    """An OpenAI-compatible answer to the bench prompt: (JSON completion, SSE stream, model list)."""
    base = {"id": "chatcmpl-bench", "created": 1700000000, "model": MODEL}
    usage = {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}
    completion = dict(
        base,
        object="chat.completion",
        choices=[
            {"index": 0, "message": {"role": "assistant", "content": "Hello, benchmark!"}, "finish_reason": "stop"}
        ],
        usage=usage,
    )
    chunks = [{"role": "assistant", "content": ""}] + [{"content": w} for w in ("Hello", ",", " bench", "mark", "!")]
    events = [
        dict(base, object="chat.completion.chunk", choices=[{"index": 0, "delta": d, "finish_reason": None}])
        for d in chunks
    ]
    events.append(
        dict(base, object="chat.completion.chunk", choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])
    )
    events.append(dict(base, object="chat.completion.chunk", choices=[], usage=usage))
    stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    models = {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "bench"}]}
    return json.dumps(completion).encode(), stream.encode(), json.dumps(models).encode()


def start_upstream(workdir: Path) -> tuple[subprocess.Popen, int]:
    """The upstream double: HAProxy answering from memory, far faster than either gateway."""
    completion, stream, models = upstream_bodies()
    rules = [
        static_origin.Rule("{ path_end /models }", 200, "application/json", models),
        static_origin.Rule('{ req.body -m reg "\\"stream\\"[ ]*:[ ]*true" }', 200, "text/event-stream", stream),
        static_origin.Rule("", 200, "application/json", completion),
    ]
    return static_origin.start(workdir / "upstream", rules, buffer_request=True)


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
    try:
        wait_port(port, proc, "litellm", timeout=300)
    except SystemExit:
        stop(proc)  # not left running when it did not start in time
        raise
    time.sleep(3)
    return proc, f"http://127.0.0.1:{port}/v1", key


def check_answer(base: str, key: str | None, stream: bool) -> None:
    """One request through `base` before the load: the answer must be the upstream's, complete."""
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = dict(BODY, stream=True) if stream else BODY
    r = httpx.post(base + "/chat/completions", json=body, headers=headers, timeout=30, trust_env=False)
    complete = r.text.rstrip().endswith("[DONE]") if stream else "Hello, benchmark!" in r.text
    if r.status_code != 200 or not complete:
        raise SystemExit(f"{base} answered {r.status_code}: {r.text[:300]}")


def drive(base: str, key: str | None, c: int, seconds: float, stream: bool) -> WrkResult:
    body = dict(BODY, stream=True) if stream else BODY
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    check_answer(base, key, stream)
    return wrk_run(
        base + "/chat/completions", c, seconds, method="POST", body=json.dumps(body).encode(), headers=headers
    )


async def header_overhead(base: str, key: str, n: int = 1000) -> tuple[float, float]:
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
    results: dict[tuple[str, str, int], WrkResult] = {}
    modes = (("json", False), ("stream", True))
    labels = {"upstream": "upstream (HAProxy)", "rayfleet": "rayfleet via Serve", "direct": "rayfleet direct"}

    def measure(name: str, base: str, key: str | None) -> None:
        for mode, stream in modes:
            for c in CLIENTS:
                r = drive(base, key, c, args.seconds, stream)
                results[(name, mode, c)] = r
                print(r.row(f"{labels.get(name, name)} {mode}", c), flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        upstream, up_port = start_upstream(work)
        procs: list[subprocess.Popen | Launched] = [upstream]
        try:
            measure("upstream", f"http://127.0.0.1:{up_port}/v1", None)
            rf_proc, rf_base, rf_direct, rf_key = start_rayfleet(work, up_port)
            procs.append(rf_proc)
            measure("rayfleet", rf_base, rf_key)
            measure("direct", rf_direct, rf_key)
            for label, base in (("via Serve", rf_base), ("direct", rf_direct)):
                p50, p99 = asyncio.run(header_overhead(base, rf_key))
                print(
                    f"rayfleet {label} x-rayfleet-overhead-ms header (sequential): p50 {p50:.2f} ms  p99 {p99:.2f} ms"
                )
            rf_proc.stop()
            if not args.skip_litellm:
                ll_proc, ll_base, ll_key = start_litellm(work, up_port, args.litellm_workers)
                procs.append(ll_proc)
                measure("litellm", ll_base, ll_key)
        finally:
            for proc in reversed(procs):
                stop(proc)
    print()
    print("via Serve: <serve>/llm/v1 (proxy hop); direct: http://127.0.0.1:<server.port>/v1 (gateway's own port)")
    print("load: wrk (2 threads), 2xx answers only; upstream: HAProxy answering from memory")
    print(
        f"{'mode':<7} {'c':>3} {'upstream':>9} {'serve rps':>10} {'direct rps':>10} {'litellm rps':>11} "
        f"{'up/direct':>9} {'up/ll':>7} {'serve/ll':>8} {'direct/ll':>9}"
    )
    for mode, _ in modes:
        for c in CLIENTS:
            up = results[("upstream", mode, c)]
            rf = results[("rayfleet", mode, c)]
            dr = results[("direct", mode, c)]
            ll = results.get(("litellm", mode, c))
            print(
                f"{mode:<7} {c:>3} {up.rps:9.0f} {rf.rps:10.1f} {dr.rps:10.1f} {ll.rps if ll else float('nan'):11.1f} "
                f"{ratio(up.rps, dr.rps):>9} {ratio(up.rps, ll.rps) if ll else 'n/a':>7} "
                f"{ratio(rf.rps, ll.rps) if ll else 'n/a':>8} {ratio(dr.rps, ll.rps) if ll else 'n/a':>9}"
            )


if __name__ == "__main__":
    main()
