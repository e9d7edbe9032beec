"""Serve's HTTP ingress options, measured: default proxy vs HAProxy with direct ingress.

Starts `rayfleet up --ingress MODE` for one application, drives a cheap route at
16 and 64 concurrent clients, stops it, and prints both with their ratio.
Usage: python bench/platform_ingress.py [--app ignore_gen] [--path /ignore/healthz]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import Result, ratio, run  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(mode: str, app: str, config: str, workdir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, RAYFLEET_PORT=str(port), RAYFLEET_STATE_DIR=str(workdir / mode))
    env.pop("RAY_ADDRESS", None)
    log = open(workdir / f"{mode}.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "rayfleet.cli", "up", "--config", config,
                             "--only", app, "--ingress", mode], env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    state = workdir / mode / "rayfleet.json"
    deadline = time.monotonic() + 300
    while not state.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{mode}: rayfleet up failed, see {workdir / (mode + '.log')}")
        time.sleep(0.5)
    return proc, json.loads(state.read_text())["base_url"]


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", default="ignore_gen")
    parser.add_argument("--path", default="/ignore/healthz")
    parser.add_argument("--config", default="serve.yaml")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    results: dict[tuple[str, int], Result] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("proxy", "haproxy"):
            proc, base = start(mode, args.app, args.config, Path(tmp))
            try:
                for c in (16, 64):
                    r = asyncio.run(run(f"{mode} {args.path}", base + args.path, c, args.seconds))
                    results[(mode, c)] = r
                    print(r.row(), flush=True)
            finally:
                stop(proc)
    for c in (16, 64):
        p, h = results[("proxy", c)], results[("haproxy", c)]
        print(f"c={c}: haproxy/proxy throughput {ratio(h.rps, p.rps)}, "
              f"p99 {h.pct(99):.1f} ms vs {p.pct(99):.1f} ms")


if __name__ == "__main__":
    main()
