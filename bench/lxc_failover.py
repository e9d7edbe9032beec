"""Container API on a cluster zone whose entry node is down: what the fail-over costs.

    python bench/lxc_failover.py                  # 3-node pve-sim cluster, 40 rounds
    python bench/lxc_failover.py --rounds 100

In one process, without Ray: a 3-node pve-sim cluster (each node its own SSH port), the container
API called in-process (httpx's ASGI transport; the actors are `rayfleet.state`'s in-process
stand-ins). The zone enters at pve1; containers are spread over pve2 and pve3.

The peer is the same API with every node up, measured first in the same run; then pve1 is
powered off (its SSH server refuses, the others report it offline) and the same requests are
sent again: `GET /lxc/instances` (read from the next node that answers) and `GET
/lxc/instances/{id}` of a container on pve2 after its map was dropped (the map read again from a
live node). Only 200 answers are counted. Printed: median and p95 per request, CPU time of this
process per request, and ours/peer; plus the first request after the entry went down (the one
that meets the refused connection) on its own. And, every node up, what the listing's node probes
cost: `containers.zone_view` without and with them, in turn (CPU is the whole process's, the
simulator's thread included).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from deployments.lxc import containers
from rayfleet.state import local_state
from tests.deployments.lxc.simenv import TEMPLATE, SimEnv, make_client

NODES = ["pve1", "pve2", "pve3"]


async def timed(calls: list[Any]) -> tuple[list[float], float, int]:
    """Each call in turn: wall times of the 200 answers, CPU seconds in all, and the failures."""
    walls: list[float] = []
    failed = 0
    cpu = time.process_time()
    for call in calls:
        start = time.perf_counter()
        response: httpx.Response = await call()
        if response.status_code == 200:
            walls.append(time.perf_counter() - start)
        else:
            failed += 1
    return walls, time.process_time() - cpu, failed


def summary(walls: list[float], cpu: float) -> str:
    if not walls:
        return "no successful answer"
    p95 = sorted(walls)[max(0, int(len(walls) * 0.95) - 1)]
    return (
        f"{len(walls)} ok, median {statistics.median(walls) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
        f"CPU {cpu / len(walls) * 1000:.1f} ms/request"
    )


async def phase(api: httpx.AsyncClient, svc: Any, vmid: str, rounds: int) -> dict[str, tuple[list[float], float]]:
    async def listing() -> httpx.Response:
        return await api.get("/api/v1/lxc/instances")

    async def shown() -> httpx.Response:
        placement = svc.target("eu-south-1", "az1").cluster
        placement.where.clear()  # forget the map: this request reads it again
        return await api.get(f"/api/v1/lxc/instances/{vmid}")

    out: dict[str, tuple[list[float], float]] = {}
    for name, call in (("list", listing), ("get (map re-read)", shown)):
        walls, cpu, failed = await timed([call] * rounds)
        if failed:
            print(f"  {name}: {failed} answers were not 200")
        out[name] = (walls, cpu)
    return out


async def probe_cost(svc: Any, rounds: int) -> dict[str, tuple[list[float], float]]:
    """The listing's read alone (`containers.zone_view`) without and with the node probes (every
    node up, their pooled connections open), called in turn in the same run."""
    target = svc.target("eu-south-1", "az1")
    out: dict[str, list[float]] = {"read only": [], "read + probes": []}
    cpu = {"read only": 0.0, "read + probes": 0.0}
    for _ in range(rounds):
        for name, probe in (("read only", False), ("read + probes", True)):
            start, used = time.perf_counter(), time.process_time()
            await containers.zone_view(target, probe=probe)
            out[name].append(time.perf_counter() - start)
            cpu[name] += time.process_time() - used
    return {name: (walls, cpu[name]) for name, walls in out.items()}


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sim = SimEnv(root / "sim", nodes=NODES)
        try:
            zone = {**sim.zone("pve1"), "nodes": {name: {"port": port} for name, port in sim.ports.items()}}
            config = sim.config(root, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})
            with local_state():
                api, app = make_client(config)
                async with api:
                    ids = []
                    for node in ("pve2", "pve3") * 5:
                        made = await api.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE})
                        vmid = made.json()["instance_ids"][0]
                        moved = await api.post(
                            f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": node, "restart": True}
                        )
                        assert moved.status_code == 200, moved.text
                        ids.append(vmid)
                    svc = app.state.component.service
                    peer = await phase(api, svc, ids[0], rounds)
                    probed = await probe_cost(svc, rounds)
                    sim.power_off("pve1")
                    first, first_cpu, first_failed = await timed([lambda: api.get("/api/v1/lxc/instances")])
                    ours = await phase(api, svc, ids[0], rounds)
                await svc.pool.close()
        finally:
            sim.stop()
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}  (pid {os.getpid()}, rounds {rounds})")
    print(f"first list after pve1 went down: {summary(first, first_cpu)}; not 200: {first_failed}")
    for name, (walls, cpu) in probed.items():
        print(f"zone_view {name}: {summary(walls, cpu)}")
    (rw, rc), (pw_, pc_) = probed["read only"], probed["read + probes"]
    print(
        f"zone_view ratio with probes / read only: median {statistics.median(pw_) / statistics.median(rw):.2f}x, "
        f"CPU {pc_ / rc:.2f}x"
    )
    for name in peer:
        (pw, pc), (ow, oc) = peer[name], ours[name]
        print(f"{name}: all nodes up  {summary(pw, pc)}")
        print(f"{name}: entry down    {summary(ow, oc)}")
        if pw and ow:
            print(f"{name}: ratio entry down / up: median {statistics.median(ow) / statistics.median(pw):.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    asyncio.run(main(parser.parse_args().rounds))
