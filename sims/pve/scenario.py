"""A simulated day for the autoscaler: containers, their first allocation and their demand curves.

`day_scenario` is what the benchmark and the `make up` demo run: 20 containers
over two nodes with the five shapes of load (steady, daily cycle, spikes, a
runaway process, a memory leak). `install` creates them, running, in a node's
model; `load_document` is the matching ``load.json`` for a pve-sim process.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from typing import TypedDict

from .model import Config, NodeModel
from .nodestatus import set_hardware

CurveSpec = dict[str, float | str]
"""A demand curve as a load file writes it (`kind` and its parameters; see load.py)."""


class ScenarioContainer(TypedDict):
    config: Config
    curve: CurveSpec


FIRST_CORES = 2
FIRST_MEMORY_MB = 1024
NODE_CPUS = 32
NODE_MEMORY_MB = 24_576
"""The size of the nodes the day was written for (ten containers each, up to 8 cores and 8 GiB)."""


def _curve(kind: str, rng: random.Random) -> CurveSpec:
    if kind == "daily":
        return {
            "kind": "daily",
            "cpu": round(rng.uniform(0.2, 0.6), 2),
            "amplitude": round(rng.uniform(1.2, 3.2), 2),
            "peak_hour": round(rng.uniform(11, 20), 1),
            "mem": round(rng.uniform(300, 600)),
            "mem_amplitude": round(rng.uniform(100, 500)),
        }
    if kind == "steady":
        return {"kind": "steady", "cpu": round(rng.uniform(0.2, 1.4), 2), "mem": round(rng.uniform(200, 700))}
    if kind == "spikes":
        return {
            "kind": "spikes",
            "cpu": round(rng.uniform(0.3, 0.7), 2),
            "spike_cores": round(rng.uniform(1.5, 3.0), 2),
            "spikes_per_hour": 0.4,
            "spike_minutes": 15,
            "mem": round(rng.uniform(250, 500)),
            "mem_amplitude": 150,
        }
    if kind == "runaway":
        return {"kind": "runaway", "cpu": 0.5, "runaway_at_h": round(rng.uniform(8, 16), 1), "mem": 350}
    return {"kind": "leak", "cpu": 0.4, "mem": 300, "leak_mb_per_h": round(rng.uniform(60, 120))}


KINDS = ["daily"] * 8 + ["steady"] * 4 + ["spikes"] * 4 + ["runaway"] * 2 + ["leak"] * 2


def day_scenario(seed: int = 7, nodes: tuple[str, ...] = ("pve1", "pve2")) -> dict[str, dict[str, ScenarioContainer]]:
    """{node: {vmid: {"config": {...}, "curve": {...}}}}: 20 containers dealt over the nodes."""
    rng = random.Random(seed)
    out: dict[str, dict[str, ScenarioContainer]] = {node: {} for node in nodes}
    for i, kind in enumerate(KINDS):
        vmid = str(101 + i)
        node = nodes[i % len(nodes)]
        out[node][vmid] = {
            "config": {
                "hostname": f"{kind}-{vmid}",
                "cores": FIRST_CORES,
                "memory": FIRST_MEMORY_MB,
                "swap": 0,
                "ostype": "debian",
                "arch": "amd64",
                "rootfs": f"local-lvm:vm-{vmid}-disk-0,size=8G",
                "net0": f"name=eth0,bridge=vmbr0,ip=10.20.0.{i + 10}/24,gw=10.20.0.1",
            },
            "curve": _curve(kind, rng),
        }
    return out


def install(model: NodeModel, containers: Mapping[str, ScenarioContainer]) -> None:
    """Create the containers (running) in a node's model; existing ones are left as they are."""
    for vmid, spec in containers.items():
        if vmid in model.containers:
            continue
        ct = model.new_container(vmid, dict(spec["config"]))
        ct["status"] = "running"
        ct["started_at"] = time.time()
    model.save()


def size_node(model: NodeModel) -> None:
    """Give a node the hardware the day was written for (what its `/nodes/<node>/status` tells)."""
    set_hardware(model, NODE_CPUS, NODE_MEMORY_MB)


def load_document(containers: Mapping[str, ScenarioContainer], seed: int, speed: float) -> dict[str, object]:
    return {"seed": seed, "speed": speed, "containers": {vmid: spec["curve"] for vmid, spec in containers.items()}}
