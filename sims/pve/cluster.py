"""A simulated Proxmox VE cluster: N nodes sharing one cluster document.

Real nodes share `/etc/pve` through pmxcfs: the membership, the firewall and every node's
container configurations are visible on each of them. Here the nodes live in one process:
each has its own model (containers, storages, services, SSH port) under
``<state>/nodes/<node>/``, and they share ``<state>/cluster.json`` (membership and the
cluster firewall) and ``<state>/etc-pve`` (each node's ``/etc/pve`` links to it).
"""

from __future__ import annotations

from pathlib import Path

from .model import ClusterDoc, NodeModel


def cluster_models(state_dir: str | Path, names: list[str]) -> list[NodeModel]:
    """The nodes of a cluster kept under `state_dir` (created on first use)."""
    root = Path(state_dir)
    doc = ClusterDoc(root, names)
    known = doc.data["cluster"]["nodes"]
    if list(known) != list(names):
        raise ValueError(f"{root} holds the cluster of nodes {', '.join(known)}, not {', '.join(names)}")
    return [NodeModel(root / "nodes" / name, name, cluster=doc) for name in names]
