"""Container API throughput through Serve vs. an ssh-process-per-command baseline, same pve-sim.

    python bench/lxc.py                 # starts `rayfleet up --only lxc` on free ports (own pve-sim)
    python bench/lxc.py --requests 400 --concurrency 16

Two workloads, each measured against the same simulator in the same run:

* `GET /lxc/api/v1/lxc/instances`: ours goes through Serve, the replica's pooled
  asyncssh connection and `pvesh ... --output-format json`. The baseline does what
  the comparable project does per request: a fresh OpenSSH `ssh` client process
  (BatchMode, pinned known_hosts) running `pct list`, at the same concurrency.
* Bulk start of 20 stopped containers: ours is one `POST .../instances/start`
  (per-container locks, commands concurrent on the pooled connection); the
  baseline runs `ssh ... pct start <id>` once per container, one after another,
  as the comparable project's loop does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from rayfleet.launcher import Launched, free_port, launch

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
BULK = 20


def start_cluster(workdir: Path, ingress: str) -> tuple[Launched, dict]:
    sim_port = free_port()
    launched = launch(
        workdir,
        ["lxc"],
        ingress=ingress,
        cwd=ROOT,
        timeout=300,
        env={"LXC_SIM_PORT": str(sim_port), "RAYFLEET_LOG_LEVEL": "WARNING"},
    )
    sim = {
        "port": sim_port,
        "key": str(workdir / "lxc-sim" / "client_key"),
        "known_hosts": str(workdir / "lxc-sim" / "known_hosts"),
    }
    return launched, sim


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def ssh_argv(sim: dict, command: str) -> list[str]:
    return [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        f"UserKnownHostsFile={sim['known_hosts']}",
        "-o",
        "ConnectTimeout=15",
        "-o",
        "ServerAliveInterval=5",
        "-i",
        sim["key"],
        "-p",
        str(sim["port"]),
        "root@127.0.0.1",
        command,
    ]


def baseline_call(sim: dict, command: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(ssh_argv(sim, command), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise RuntimeError(f"baseline ssh failed ({result.returncode}): {result.stderr.strip()}")
    return time.perf_counter() - started


async def ours_list(base: str, key: str, requests: int, concurrency: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    queue = list(range(requests))
    async with httpx.AsyncClient(
        base_url=base,
        headers={"X-API-Key": key},
        timeout=60,
        trust_env=False,
        limits=httpx.Limits(max_connections=concurrency),
    ) as client:

        async def worker() -> None:
            while queue:
                queue.pop()
                started = time.perf_counter()
                response = await client.get("/lxc/api/v1/lxc/instances")
                response.raise_for_status()
                latencies.append(time.perf_counter() - started)

        for _ in range(10):
            (await client.get("/lxc/api/v1/lxc/instances")).raise_for_status()
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies


def baseline_list(sim: dict, requests: int, concurrency: int) -> tuple[float, list[float]]:
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        latencies = list(pool.map(lambda _: baseline_call(sim, "pct list"), range(requests)))
    return time.perf_counter() - started, latencies


def prepare_bulk(client: httpx.Client) -> list[str]:
    created = client.post("/lxc/api/v1/lxc/instances", json={"image_id": TEMPLATE, "count": BULK, "hostname": "bench"})
    created.raise_for_status()
    return created.json()["instance_ids"]


def stop_all(client: httpx.Client, ids: list[str]) -> None:
    client.post("/lxc/api/v1/lxc/instances/stop", json={"instance_ids": ids}).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5, help="bulk-start rounds for each side")
    parser.add_argument(
        "--ingress",
        choices=("haproxy", "proxy"),
        default=os.environ.get("RAYFLEET_INGRESS", "proxy"),
        help="Serve ingress of the cluster under test (rayfleet up --ingress)",
    )
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory()
    launched, sim = start_cluster(Path(tmp.name), args.ingress)
    base, key = launched.base_url, launched.secrets["LXC_API_KEY"]
    print(f"rayfleet up --only lxc ({args.ingress} ingress) at {base}; pve-sim on 127.0.0.1:{sim['port']}")
    try:
        with httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=300, trust_env=False) as client:
            ids = prepare_bulk(client)
            ours_wall, ours_lat = asyncio.run(ours_list(base, key, args.requests, args.concurrency))
            base_wall, base_lat = baseline_list(sim, args.requests, args.concurrency)
            print(
                f"GET /lxc/instances ({len(ids)} containers), {args.requests} requests, concurrency {args.concurrency}"
            )
            print(f"{'':>22} {'req/s':>9} {'p50':>9} {'p99':>9}")
            ours_rps, base_rps = args.requests / ours_wall, args.requests / base_wall
            print(
                f"{'rayfleet via Serve':>22} {ours_rps:>9.1f} {pct(ours_lat, 0.5):>7.1f}ms {pct(ours_lat, 0.99):>7.1f}ms"
            )
            print(
                f"{'ssh process/command':>22} {base_rps:>9.1f} {pct(base_lat, 0.5):>7.1f}ms {pct(base_lat, 0.99):>7.1f}ms"
            )
            print(
                f"ratio (ours/baseline): throughput {ours_rps / base_rps:.1f}x, "
                f"p50 {pct(base_lat, 0.5) / pct(ours_lat, 0.5):.1f}x faster"
            )

            ours_bulk, base_bulk = [], []
            for _ in range(args.rounds):
                stop_all(client, ids)
                started = time.perf_counter()
                client.post("/lxc/api/v1/lxc/instances/start", json={"instance_ids": ids}).raise_for_status()
                ours_bulk.append(time.perf_counter() - started)
                stop_all(client, ids)
                started = time.perf_counter()
                for vmid in ids:
                    baseline_call(sim, f"pct start {vmid}")
                base_bulk.append(time.perf_counter() - started)
            print(f"\nbulk start of {BULK} stopped containers, {args.rounds} rounds")
            print(f"{'':>22} {'p50':>9} {'max':>9}")
            print(
                f"{'rayfleet via Serve':>22} {statistics.median(ours_bulk) * 1000:>7.1f}ms {max(ours_bulk) * 1000:>7.1f}ms"
            )
            print(
                f"{'ssh process/command':>22} {statistics.median(base_bulk) * 1000:>7.1f}ms {max(base_bulk) * 1000:>7.1f}ms"
            )
            print(f"ratio (baseline/ours p50): {statistics.median(base_bulk) / statistics.median(ours_bulk):.1f}x")
            client.post("/lxc/api/v1/lxc/instances/terminate", json={"instance_ids": ids})
    finally:
        launched.stop()
        tmp.cleanup()


if __name__ == "__main__":
    main()
