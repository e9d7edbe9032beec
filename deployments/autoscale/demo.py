"""The autoscaler's demo nodes for `make up`: two pve-sim processes carrying a simulated day of load.

Each node gets the hardware the day was written for (`size_node`: 32 CPUs,
24 GiB, what its `pvesh get /nodes/<node>/status` answers), its ten containers
of `day_scenario` (created running on first start) and a ``load.json`` with their demand curves, at `AUTOSCALE_SIM_SPEED`
simulated seconds per wall second (default 60: a day in 24 minutes). Ports come
from `AUTOSCALE_SIM_PVE1_PORT` / `AUTOSCALE_SIM_PVE2_PORT` (default 2231/2232,
a free one when taken); each node's folder is exported as
`AUTOSCALE_SIM_PVE1_DIR` / `AUTOSCALE_SIM_PVE2_DIR` for the config's key paths.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypedDict

from sims.pve.demo import DemoHost, ensure_demo_host
from sims.pve.model import NodeModel
from sims.pve.scenario import ScenarioContainer, day_scenario, install, load_document, size_node

NODES = {"pve1": 2231, "pve2": 2232}
SEED = 7


def _seed_node(state: Path, node: str, containers: dict[str, ScenarioContainer], speed: float) -> None:
    model = NodeModel(state, node)
    size_node(model)
    install(model, containers)
    (state / "load.json").write_text(json.dumps(load_document(containers, SEED, speed)))


class DemoHosts(TypedDict):
    """How to reach the first demo node (`host`, `port`) and every node (`hosts`)."""

    host: str
    port: int
    hosts: dict[str, DemoHost]


def ensure_demo_hosts(var_dir: str | os.PathLike[str]) -> DemoHosts:
    """Start (once) both demo nodes; return how to reach the first (and all, under `hosts`)."""
    speed = float(os.environ.get("AUTOSCALE_SIM_SPEED", "60"))
    scenario = day_scenario(SEED, tuple(NODES))
    hosts: dict[str, DemoHost] = {}
    for node, port in NODES.items():
        name = f"autoscale-sim-{node}"
        _seed_node(Path(var_dir) / name / "state", node, scenario[node], speed)
        hosts[node] = ensure_demo_host(
            var_dir,
            name=name,
            port_env=f"AUTOSCALE_SIM_{node.upper()}_PORT",
            dir_env=f"AUTOSCALE_SIM_{node.upper()}_DIR",
            default_port=port,
            node=node,
        )
    first = hosts["pve1"]
    return {"host": first["host"], "port": first["port"], "hosts": hosts}
