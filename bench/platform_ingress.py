"""Ingress candidates, measured in one run: Serve's proxy, rayfleet's direct ingress, plain uvicorn.

For one application (default ignore_gen, 2 replicas) it measures, at 16 and 64 clients:
- ``front``: the public Serve port, HAProxy in front of Serve's proxy (rayfleet.front);
- ``proxy``: Serve's HTTP proxy straight, on its loopback port behind the front;
- ``direct``: the same cluster, each replica's SO_REUSEPORT listener (rayfleet.direct);
- ``uvicorn``: the same app under plain ``uvicorn --workers 2`` (as many processes as replicas);
- ``haproxy`` (``--with-haproxy``): Serve's own direct-ingress mode behind its HAProxy.
and prints front/proxy (what the front's connection limits cost), direct/uvicorn (target >= 0.7; direct and uvicorn alternate over --rounds with the
cluster up during both, and the median ratio is reported) and direct/proxy. Two routes: the cheap
``/healthz`` and a real ``/generate``.
With ``--multinode``: a head and a worker node (`ray start`, token auth, rayfleet.nodes)
joined by `RAY_ADDRESS=... rayfleet up`, ignore_gen with one replica per node, direct
listeners per node; throughput with replicas on two nodes, then the worker is killed
and the same load runs against the head alone (on 2 cores this only shows that nothing
serializes across nodes). The worker is killed under load on Serve's route and the failed
requests are counted; then, on a fresh single-node cluster with quick scaling settings, wrk
drives ignore_gen's direct port and the replica count is printed over time (up, then down).
Usage: python bench/platform_ingress.py [--seconds 5] [--with-haproxy] [--multinode]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import ratio
from wrk_load import WrkResult, wrk_run

from rayfleet import upstate
from rayfleet.launcher import free_port, launch

ROOT = Path(__file__).resolve().parent.parent
ROUTES = {"healthz": ("GET", "/healthz", None), "generate": ("POST", "/generate", {"features": ["python", "node"]})}
CLIENTS = (16, 64)


def ignore_gen_app():
    """The ignore_gen app exactly as a replica builds it (uvicorn --factory target)."""
    from deployments.ignore_gen.app import create_app
    from deployments.ignore_gen.config import load

    return create_app(load(str(ROOT / "config/ignore_gen.yaml")), state=None)


def measure(label: str, base: str, seconds: float, results: dict) -> None:
    """wrk (a C client, so the load generator is not what is measured) on every route and level."""
    for route, (method, path, body) in ROUTES.items():
        for c in CLIENTS:
            payload = json.dumps(body).encode() if body else None
            headers = {"Content-Type": "application/json"} if body else {}
            r = wrk_run(base + path, c, seconds, method=method, body=payload, headers=headers)
            results.setdefault((label, route, c), []).append(r)
            print(r.row(f"{label} {route}", c), flush=True)


def serve_port(launched) -> int:
    """Serve's own port behind the front (`rayfleet up` records it in its state file)."""
    state = json.loads((launched.state_dir / "rayfleet.json").read_text())
    front = state.get("front_status")
    if not front:
        raise SystemExit("rayfleet up ran without its front (config/front.yaml enabled: false?)")
    return int(front["serve_port"])


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


async def spread(label: str, urls: list[str], clients: int, seconds: float) -> float:
    """Successful responses/s of `clients` split evenly over `urls` (one wrk per URL, run together)."""
    share = max(1, clients // len(urls))
    runs = await asyncio.gather(*(asyncio.to_thread(wrk_run, u + "/healthz", share, seconds, threads=1) for u in urls))
    for url, r in zip(urls, runs, strict=True):
        print(r.row(f"{label} {url}", share), flush=True)
    return sum(r.rps for r in runs)


def wait_answering(urls: list[str], timeout: float = 120) -> None:
    """Until every direct URL answers /healthz with 200 (a replica's listener is up)."""
    deadline = time.monotonic() + timeout
    pending = list(urls)
    while pending and time.monotonic() < deadline:
        for url in list(pending):
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    pending.remove(url)
            except httpx.HTTPError:
                pass
        time.sleep(0.5)
    if pending:
        raise SystemExit(f"direct listeners not answering: {pending}")


def multinode(seconds: float) -> None:
    import yaml

    from rayfleet import nodes

    root = Path(tempfile.mkdtemp(prefix="rfmb-", dir="/tmp"))
    env = nodes.auth_env(nodes.write_token(root / "auth_token"))
    started: list = []
    launched = None
    try:
        head, address = nodes.start_node("head", root, node_ip="127.0.0.2", resources={"rf_head": 1}, env=env)
        started.append(head)
        worker, _ = nodes.start_node(
            "worker", root, head_address=address, node_ip="127.0.0.3", resources={"rf_worker": 1}, env=env
        )
        started.append(worker)
        config = yaml.safe_load((ROOT / "serve.yaml").read_text())
        app = next(a for a in config["applications"] if a["name"] == "ignore_gen")
        app["args"]["direct"]["host"] = "node"
        app["deployments"][0].pop("autoscaling_config")
        app["deployments"][0].update({"num_replicas": 2, "max_replicas_per_node": 1})
        config["applications"] = [app]
        (root / "serve.yaml").write_text(yaml.safe_dump(config))
        launched = launch(
            root / "state",
            ["ignore_gen"],
            config=str(root / "serve.yaml"),
            cwd=ROOT,
            env={**env, "RAY_ADDRESS": address},
        )
        port = launched.direct["ignore_gen"].rsplit(":", 1)[1]
        both = [f"http://127.0.0.2:{port}", f"http://127.0.0.3:{port}"]
        wait_answering(both)
        figures = {}
        for c in CLIENTS:
            figures[("two", c)] = asyncio.run(spread("2 nodes direct", both, c, seconds))
        kill_under_load(launched.base_url + "/ignore/generate", worker)
        wait_answering(both[:1])
        for c in CLIENTS:
            figures[("one", c)] = asyncio.run(spread("1 node direct", both[:1], c, seconds))
        print("\nmulti-node (direct, /healthz, successful responses/s, same run):")
        for c in CLIENTS:
            two, one = figures[("two", c)], figures[("one", c)]
            print(f"  c={c:<3} two nodes {two:8.1f}  one node {one:8.1f}  two/one {ratio(two, one)}")
    finally:
        if launched is not None:
            launched.stop()
        for node in reversed(started):
            node.kill()
        shutil.rmtree(root, ignore_errors=True)
    autoscaling(seconds)


def _client_loop(url: str, stop: threading.Event, tally: dict) -> None:
    """One closed-loop client of the Serve route; every answer is tallied by outcome and time."""
    body = ROUTES["generate"][2]
    with httpx.Client(timeout=10) as client:
        while not stop.is_set():
            try:
                ok = client.post(url, json=body).status_code == 200
            except httpx.HTTPError:
                ok = False
            with tally["lock"]:
                tally["ok" if ok else "failed"].append(time.monotonic())


def kill_under_load(url: str, worker, clients: int = 8) -> None:
    """Serve's route under load while the worker node is SIGKILLed: prints the requests that
    failed (those in flight on the dead node) and the successes before and after."""
    stop, tally = threading.Event(), {"ok": [], "failed": [], "lock": threading.Lock()}
    threads = [threading.Thread(target=_client_loop, args=(url, stop, tally), daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(3)
    killed_at = time.monotonic()
    worker.kill()
    time.sleep(15)  # past the clients' 10 s timeout: a request stuck on the dead node has failed by now
    stop.set()
    for t in threads:
        t.join(timeout=15)
    ok_before = sum(1 for t in tally["ok"] if t < killed_at)
    failed = tally["failed"]
    window = max(failed) - killed_at if failed else 0.0
    print(
        f"\nworker killed under load ({clients} clients on Serve's route): ok before the kill {ok_before}, "
        f"failed {len(failed)} (all within {window:.1f} s of the kill), ok after the kill "
        f"{len(tally['ok']) - ok_before}",
        flush=True,
    )


def autoscaling(seconds: float) -> None:
    """Serve autoscaling on direct load: ignore_gen with quick scaling settings, wrk on its direct
    port for a while, then idle; prints the replica count over time (from `rayfleet up`'s snapshot)."""
    import yaml

    root = Path(tempfile.mkdtemp(prefix="rfas-", dir="/tmp"))
    config = yaml.safe_load((ROOT / "serve.yaml").read_text())
    app = next(a for a in config["applications"] if a["name"] == "ignore_gen")
    app["deployments"][0]["autoscaling_config"].update(
        {
            "target_ongoing_requests": 2,
            "upscale_delay_s": 2,
            "downscale_delay_s": 8,
            "look_back_period_s": 2,
            "metrics_interval_s": 0.5,
        }
    )
    config["applications"] = [app]
    (root / "serve.yaml").write_text(yaml.safe_dump(config))
    launched = launch(root / "state", ["ignore_gen"], config=str(root / "serve.yaml"), cwd=ROOT)
    counts: list[tuple[float, int]] = []
    start = time.monotonic()

    def sample() -> int:
        state = upstate.fresh(root / "state") or {}
        replicas = int(((state.get("serve") or {}).get("ignore_gen") or {}).get("replicas") or 0)
        if not counts or counts[-1][1] != replicas:
            counts.append((round(time.monotonic() - start, 1), replicas))
        return replicas

    try:
        load = threading.Thread(
            target=wrk_run,
            args=(launched.direct["ignore_gen"] + "/generate", 24, max(45.0, seconds * 5)),
            kwargs={
                "method": "POST",
                "body": json.dumps(ROUTES["generate"][2]).encode(),
                "headers": {"Content-Type": "application/json"},
            },
            daemon=True,
        )
        load.start()
        while load.is_alive():
            sample()
            time.sleep(0.5)
        load_ended = round(time.monotonic() - start, 1)
        deadline = time.monotonic() + 120
        while sample() > 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        print(
            f"\nautoscaling on direct load (wrk, 24 connections until t={load_ended} s, then idle); "
            "ignore_gen replicas over time (s, replicas): " + ", ".join(f"({t}, {n})" for t, n in counts),
            flush=True,
        )
    finally:
        launched.stop()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3, help="alternating direct/uvicorn rounds")
    parser.add_argument("--with-haproxy", action="store_true")
    parser.add_argument("--multinode", action="store_true", help="only the two-node vs one-node figure")
    args = parser.parse_args()
    if args.multinode:
        multinode(args.seconds)
        return
    results: dict[tuple[str, str, int], list[WrkResult]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        launched = launch(Path(tmp) / "proxy", ["ignore_gen"], cwd=ROOT)
        port = free_port()
        uv = start_uvicorn(port, workers=2)
        try:
            # the front and Serve's proxy behind it alternate too, on the same cluster
            for _ in range(args.rounds):
                measure("front", launched.base_url + "/ignore", args.seconds, results)
                measure("proxy", f"http://127.0.0.1:{serve_port(launched)}/ignore", args.seconds, results)
            # direct and uvicorn alternate, round after round, with the cluster up during both:
            # the machine's other load then weighs on both alike, and the median ratio is reported
            for _ in range(args.rounds):
                measure("direct", launched.direct["ignore_gen"], args.seconds, results)
                measure("uvicorn", f"http://127.0.0.1:{port}", args.seconds, results)
        finally:
            uv.terminate()
            uv.wait(timeout=30)
            launched.stop()
        if args.with_haproxy:
            launched = launch(Path(tmp) / "haproxy", ["ignore_gen"], ingress="haproxy", cwd=ROOT)
            try:
                measure("haproxy", launched.base_url + "/ignore", args.seconds, results)
            finally:
                launched.stop()
    print(
        f"\nratios (successful responses/s, same run; direct/uvicorn per round and their median, {args.rounds} rounds):"
    )
    for route in ROUTES:
        for c in CLIENTS:
            direct, uvicorn = results[("direct", route, c)], results[("uvicorn", route, c)]
            rounds = [d.rps / u.rps for d, u in zip(direct, uvicorn, strict=True) if u.rps]
            proxies = results[("proxy", route, c)]
            proxy = statistics.median(p.rps for p in proxies)
            fronts = [f.rps / p.rps for f, p in zip(results[("front", route, c)], proxies, strict=True) if p.rps]
            line = (
                f"  {route:<9} c={c:<3} front/proxy {statistics.median(fronts):.2f}x "
                f"(rounds {' '.join(f'{r:.2f}' for r in fronts)})\n"
            )
            line += (
                f"  {route:<9} c={c:<3} direct/uvicorn {statistics.median(rounds):.2f}x "
                f"(rounds {' '.join(f'{r:.2f}' for r in rounds)}; target >= 0.7)  "
                f"direct/proxy {ratio(statistics.median(d.rps for d in direct), proxy)}"
            )
            if ("haproxy", route, c) in results:
                line += f"  haproxy/proxy {ratio(results[('haproxy', route, c)][0].rps, proxy)}"
            print(line)


if __name__ == "__main__":
    main()
