"""Ingress candidates, measured in one run: Serve's proxy, rayfleet's direct ingress, plain uvicorn.

For one application (default ignore_gen, 2 replicas) it measures, at 16 and 64 clients:
- ``proxy``: Serve's HTTP proxy (``rayfleet up``, the Serve route);
- ``direct``: the same cluster, each replica's SO_REUSEPORT listener (rayfleet.direct);
- ``uvicorn``: the same app under plain ``uvicorn --workers 2`` (as many processes as replicas);
- ``haproxy`` (``--with-haproxy``): Serve's own direct-ingress mode behind its HAProxy.
and prints direct/uvicorn (target >= 0.7) and direct/proxy. Two routes: the cheap
``/healthz`` and a real ``/generate``.
Usage: python bench/platform_ingress.py [--seconds 5] [--with-haproxy]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import Result, ratio, run

from rayfleet.launcher import free_port, launch

ROOT = Path(__file__).resolve().parent.parent
ROUTES = {"healthz": ("GET", "/healthz", None), "generate": ("POST", "/generate", {"features": ["python", "node"]})}
CLIENTS = (16, 64)


def ignore_gen_app():
    """The ignore_gen app exactly as a replica builds it (uvicorn --factory target)."""
    from deployments.ignore_gen.app import create_app
    from deployments.ignore_gen.config import load

    return create_app(load(str(ROOT / "config/ignore_gen.yaml")), state=None)


async def measure(label: str, base: str, seconds: float, results: dict) -> None:
    for route, (method, path, body) in ROUTES.items():
        for c in CLIENTS:
            kwargs = (lambda i: {"json": body}) if body else None
            r: Result = await run(f"{label} {route}", base + path, c, seconds, method=method, make_kwargs=kwargs)
            results[(label, route, c)] = r
            print(r.row(), flush=True)


def start_uvicorn(port: int, workers: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "platform_ingress:ignore_gen_app", "--app-dir", "bench"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), "--no-access-log"]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'bench'}"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("uvicorn did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--with-haproxy", action="store_true")
    args = parser.parse_args()
    results: dict[tuple[str, str, int], Result] = {}
    with tempfile.TemporaryDirectory() as tmp:
        launched = launch(Path(tmp) / "proxy", ["ignore_gen"], cwd=ROOT)
        try:
            asyncio.run(measure("proxy", launched.base_url + "/ignore", args.seconds, results))
            asyncio.run(measure("direct", launched.direct["ignore_gen"], args.seconds, results))
        finally:
            launched.stop()
        port = free_port()
        uv = start_uvicorn(port, workers=2)
        try:
            asyncio.run(measure("uvicorn", f"http://127.0.0.1:{port}", args.seconds, results))
        finally:
            uv.terminate()
            uv.wait(timeout=30)
        if args.with_haproxy:
            launched = launch(Path(tmp) / "haproxy", ["ignore_gen"], ingress="haproxy", cwd=ROOT)
            try:
                asyncio.run(measure("haproxy", launched.base_url + "/ignore", args.seconds, results))
            finally:
                launched.stop()
    print("\nratios (successful responses/s, same run):")
    for route in ROUTES:
        for c in CLIENTS:
            d, u, p = (results[(m, route, c)] for m in ("direct", "uvicorn", "proxy"))
            line = f"  {route:<9} c={c:<3} direct/uvicorn {ratio(d.rps, u.rps)} (target >= 0.7)  direct/proxy {ratio(d.rps, p.rps)}"
            if ("haproxy", route, c) in results:
                line += f"  haproxy/proxy {ratio(results[('haproxy', route, c)].rps, p.rps)}"
            print(line)


if __name__ == "__main__":
    main()
