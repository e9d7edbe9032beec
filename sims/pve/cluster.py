"""A simulated Proxmox VE cluster: N nodes sharing one cluster document.

Real nodes share `/etc/pve` through pmxcfs: the membership, the firewall and every node's
container configurations are visible on each of them. Here the nodes live in one process:
each has its own model (containers, storages, services, SSH port) under
``<state>/nodes/<node>/``, and they share ``<state>/cluster.json`` (membership and the
cluster firewall) and ``<state>/etc-pve`` (each node's ``/etc/pve`` links to it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .model import NodeModel

DEFAULT_NODES = ("pve1", "pve2", "pve3")


class ClusterDoc:
    """The part of the state every node sees alike, and the nodes that see it."""

    shared_keys = ("cluster", "firewall")

    def __init__(self, root: Path, names: list[str]) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / "cluster.json"
        self.etc_pve = root / "etc-pve"
        self.etc_pve.mkdir(exist_ok=True)
        self.members: dict[str, NodeModel] = {}
        if self.path.exists():
            self.data: dict[str, Any] = json.loads(self.path.read_text())
        else:
            self.data = {
                "cluster": {"name": "rayfleet-demo", "nodes": list(names), "config_version": len(names)},
                "firewall": {"options": {"enable": 0}, "groups": {}},
            }

    def link_etc_pve(self, path: Path) -> None:
        """A node's `/etc/pve` is the cluster's (what pmxcfs mounts on every node)."""
        if path.is_symlink():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(self.etc_pve.resolve(), target_is_directory=True)

    def join(self, model: NodeModel) -> None:
        for key in self.shared_keys:
            model.data[key] = self.data[key]
        self.members[model.node] = model

    def node(self, name: str) -> NodeModel | None:
        return self.members.get(name)

    def where(self, vmid: str) -> NodeModel | None:
        """The node holding container `vmid`."""
        return next((m for m in self.members.values() if vmid in m.containers), None)

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


def cluster_models(state_dir: str | Path, names: list[str]) -> list[NodeModel]:
    """The nodes of a cluster kept under `state_dir` (created on first use)."""
    root = Path(state_dir)
    doc = ClusterDoc(root, names)
    known = doc.data["cluster"]["nodes"]
    if list(known) != list(names):
        raise ValueError(f"{root} holds the cluster of nodes {', '.join(known)}, not {', '.join(names)}")
    return [NodeModel(root / "nodes" / name, name, cluster=doc) for name in names]
