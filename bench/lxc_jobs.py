"""Container API jobs: what a job costs over a direct SSH call, and 50 jobs at once on 3 nodes.

    python bench/lxc_jobs.py                       # 3-node pve-sim cluster, API under uvicorn
    python bench/lxc_jobs.py --rounds 40 --jobs 50 --op-delay 1.0

Everything runs in this process, without Ray: a 3-node pve-sim cluster (each node its own SSH
port), the container API served by uvicorn on loopback (one replica; the JobBook and lock
actors are the in-process stand-ins of `rayfleet.state`, the job store a SQLite file) and
httpx as the client over real TCP. Under Ray each actor call adds a round trip; this measures
the job machinery itself.

1. Overhead: a backup (`vzdump`, the simulator holding no lock time) `--rounds` times, one at a
   time: the peer is the same `vzdump` command run directly over a pooled asyncssh connection to
   the container's node; ours is `POST .../backup` with `Prefer: respond-async`, then the job's
   event stream read until its `end` event. Both medians are printed with their ratio.
2. Concurrency: `--jobs` containers spread over the 3 nodes, one backup job each, all started
   at once (`--op-delay` s of lock time per vzdump), each followed to its end over its event
   stream. The peer is the same vzdump commands sent at once over direct pooled SSH. Only
   succeeded jobs / zero exit codes are counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from rayfleet.launcher import free_port
from rayfleet.ssh import SSHHost, SSHPool
from rayfleet.state import local_state
from tests.deployments.lxc.simenv import API_KEY, SimEnv

NODES = ["pve1", "pve2", "pve3"]
TEMPLATE = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
ASYNC = {"Prefer": "respond-async"}


def vzdump(vmid: str) -> list[str]:
    return ["vzdump", vmid, "--mode", "snapshot", "--compress", "zstd", "--dumpdir", "/var/lib/vz/dump"]


async def seed(sim: SimEnv, pool: SSHPool, hosts: dict[str, SSHHost], count: int) -> dict[str, str]:
    """`count` containers, round-robin over the nodes (created with `pct create` on each node)."""
    placed: dict[str, str] = {}
    for i in range(count):
        vmid, node = str(100 + i), NODES[i % len(NODES)]
        argv = ["pct", "create", vmid, TEMPLATE, "--memory", "512", "--rootfs", "local-lvm:8"]
        result = await pool.run(node, hosts[node], argv, 60)
        assert result.ok, result.stderr
        placed[vmid] = node
    return placed


async def job(api: httpx.AsyncClient, vmid: str) -> tuple[bool, float]:
    """One backup job, started and followed to its `end` event: (succeeded, seconds)."""
    began = time.perf_counter()
    accepted = await api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers=ASYNC)
    if accepted.status_code != 202:
        return False, time.perf_counter() - began
    final: dict[str, Any] = {}
    async with api.stream("GET", accepted.headers["location"] + "/events") as stream:
        event = ""
        async for line in stream.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "end":
                final = json.loads(line[6:])
    return final.get("state") == "succeeded", time.perf_counter() - began


async def direct(pool: SSHPool, hosts: dict[str, SSHHost], node: str, vmid: str) -> tuple[bool, float]:
    began = time.perf_counter()
    result = await pool.run(node, hosts[node], vzdump(vmid), 3600)
    return result.ok, time.perf_counter() - began


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


async def main(args: argparse.Namespace) -> None:
    from deployments.lxc.app import create_app

    work = Path(tempfile.mkdtemp(prefix="lxc-jobs-bench-"))
    sim = SimEnv(work / "sim", nodes=NODES)
    pool = SSHPool()
    hosts = {
        n: SSHHost("127.0.0.1", p, key_file=str(sim.client_key), known_hosts=str(sim.known_hosts), max_sessions=64)
        for n, p in sim.ports.items()
    }
    zone = {**sim.zone("pve1"), "nodes": {n: {"port": p} for n, p in sim.ports.items()}, "max_sessions": 64}
    config = sim.config(
        work,
        regions={"eu-south-1": {"availability_zones": {"az1": zone}}},
        jobs_store=f"sqlite:///{work}/jobs.sqlite3",
    )
    with local_state():
        app = create_app(config, state=None)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.02)
        limits = httpx.Limits(max_connections=2 * args.jobs + 10)
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers={"X-API-Key": API_KEY}, timeout=600, limits=limits
        ) as api:
            placed = await seed(sim, pool, hosts, max(args.jobs, 1))
            await api.get("/api/v1/lxc/instances")  # the API reads where each container is once
            first, node = "100", placed["100"]

            direct_times = [t for ok, t in [await direct(pool, hosts, node, first) for _ in range(args.rounds)] if ok]
            job_times = [t for ok, t in [await job(api, first) for _ in range(args.rounds)] if ok]
            print(f"overhead, {args.rounds} backups one at a time (vzdump without lock time), CT {first} on {node}:")
            print(f"  direct pooled SSH : {len(direct_times)}/{args.rounds} ok, {ms(direct_times)}")
            print(f"  API job + SSE     : {len(job_times)}/{args.rounds} ok, {ms(job_times)}")
            if direct_times and job_times:
                ratio = statistics.median(job_times) / statistics.median(direct_times)
                extra = (statistics.median(job_times) - statistics.median(direct_times)) * 1000
                print(f"  job / direct      : {ratio:.1f}x (+{extra:.0f} ms per operation)")

            sim.slow_down(args.op_delay)
            began = time.perf_counter()
            peer = await asyncio.gather(*(direct(pool, hosts, n, v) for v, n in placed.items()))
            peer_wall = time.perf_counter() - began
            began = time.perf_counter()
            ours = await asyncio.gather(*(job(api, v) for v in placed))
            ours_wall = time.perf_counter() - began
            per_node = {n: sum(1 for v in placed.values() if v == n) for n in NODES}
            print(f"concurrency, {len(placed)} backups at once over {per_node} ({args.op_delay:g} s lock time each):")
            peer_ok = [t for ok, t in peer if ok]
            ours_ok = [t for ok, t in ours if ok]
            print(f"  direct pooled SSH : {len(peer_ok)}/{len(peer)} ok in {peer_wall:.2f} s, {ms(peer_ok)}")
            print(f"  API jobs + SSE    : {len(ours_ok)}/{len(ours)} ok in {ours_wall:.2f} s, {ms(ours_ok)}")
            if peer_ok and ours_ok:
                print(f"  jobs / direct wall: {ours_wall / peer_wall:.2f}x")
        server.should_exit = True
        await serving
        await app.state.component.service.pool.close()
    await pool.close()
    sim.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--op-delay", type=float, default=1.0)
    asyncio.run(main(parser.parse_args()))
