"""`pvesh get /cluster/resources` and `/cluster/status`: the cluster as every node sees it.

Fields as PVE 8 answers them (`pvesh get /cluster/resources --type vm --output-format json`):
a container is ``{"id": "lxc/<vmid>", "type": "lxc", "vmid", "name", "node", "status",
"maxcpu", "maxmem", "mem", "maxdisk", "disk", "uptime", "template", ...}``.
"""

from __future__ import annotations

import time
from typing import Any

from .cli import param_error, parse_options
from .model import Container, NodeModel, volume_options
from .nodestatus import ROOTFS_TOTAL, ROOTFS_USED, hardware, memory_kb, uptime

RESOURCE_TYPES = ("vm", "storage", "node", "sdn")


def _members(model: NodeModel) -> list[NodeModel]:
    return list(model.cluster.members.values()) if model.cluster is not None else [model]


def _offline(model: NodeModel, name: str) -> bool:
    return model.cluster is not None and name in model.cluster.offline


def resources(model: NodeModel, args: list[str]) -> list[dict[str, Any]]:
    """As PVE answers from a live node: an offline node's guests are listed (pmxcfs has their
    configuration) with status `unknown`, and the node's row is `offline` without figures."""
    _, opts = parse_options(args, {"type": "str"})
    kind = opts.get("type")
    if kind is not None and kind not in RESOURCE_TYPES:
        raise param_error(
            "type", f"value '{kind}' does not have a value in the enumeration '{', '.join(RESOURCE_TYPES)}'"
        )
    rows: list[dict[str, Any]] = []
    for member in _members(model):
        if kind in (None, "vm"):
            for vmid, ct in sorted(member.containers.items(), key=lambda x: int(x[0])):
                row = ct_summary(vmid, ct)
                if _offline(model, member.node):
                    row["status"] = "unknown"
                cpus = row.pop("cpus")
                row.pop("maxswap", None)
                rows.append(
                    row | {"id": f"lxc/{vmid}", "node": member.node, "maxcpu": cpus, "template": row.get("template", 0)}
                )
        if kind in (None, "node"):
            offline = {"id": f"node/{member.node}", "type": "node", "node": member.node, "status": "offline"}
            rows.append(offline if _offline(model, member.node) else _node_row(member))
        if kind in (None, "storage"):
            rows.extend(_storage_rows(member))
    return rows


def _node_row(member: NodeModel) -> dict[str, Any]:
    """The node's row: the same hardware and memory as its `/nodes/<node>/status`."""
    total_kb, free_kb = memory_kb(member)
    return {
        "id": f"node/{member.node}",
        "type": "node",
        "node": member.node,
        "status": "online",
        "level": "",
        "maxcpu": hardware(member)["cpus"],
        "cpu": 0.02,
        "maxmem": total_kb * 1024,
        "mem": (total_kb - free_kb) * 1024,
        "maxdisk": ROOTFS_TOTAL,
        "disk": ROOTFS_USED,
        "uptime": int(uptime(member)),
    }


def _storage_rows(member: NodeModel) -> list[dict[str, Any]]:
    return [
        {
            "id": f"storage/{member.node}/{name}",
            "type": "storage",
            "storage": name,
            "node": member.node,
            "status": "available",
            "plugintype": store["type"],
            "content": ",".join(store["content"]),
            "shared": int(bool(store.get("shared"))),
            "maxdisk": store["total"],
            "disk": 0,
        }
        for name, store in sorted(member.storages.items())
    ]


def cluster_status(model: NodeModel) -> list[dict[str, Any]]:
    """The cluster entry, then one per node: `local` marks the node answering."""
    cluster = model.data["cluster"]
    quorate = int(model.data["services"].get("corosync") == "active" and model.quorate())
    rows: list[dict[str, Any]] = [
        {
            "id": "cluster",
            "type": "cluster",
            "name": cluster["name"],
            "nodes": len(cluster["nodes"]),
            "quorate": quorate,
            "version": cluster["config_version"],
        }
    ]
    simulated = {m.node for m in _members(model)}
    for i, name in enumerate(cluster["nodes"], start=1):
        rows.append(
            {
                "id": f"node/{name}",
                "type": "node",
                "name": name,
                "nodeid": i,
                "ip": f"192.0.2.{10 + i}",
                "local": int(name == model.node),
                "online": int((name in simulated and not _offline(model, name)) or model.cluster is None),
                "level": "",
            }
        )
    return rows


def ct_summary(vmid: str, ct: Container) -> dict[str, Any]:
    """A container's row in `/nodes/<node>/lxc` (and, with more fields, `/cluster/resources`)."""
    cfg = ct["config"]
    _, ropts = volume_options(str(cfg.get("rootfs", "")))
    size = ropts.get("size", "0G")
    gib = float(size[:-1]) if size[-1:] in "GMT" and size[:-1] else 0.0
    running = ct["status"] == "running"
    row = {
        "vmid": int(vmid),
        "name": cfg.get("hostname", f"CT{vmid}"),
        "status": ct["status"],
        "type": "lxc",
        "cpus": cfg.get("cores", 1),
        "maxmem": int(cfg.get("memory", 512)) * 1024**2,
        "mem": (48 * 1024**2) if running else 0,
        "maxdisk": int(gib * 1024**3),
        "disk": int(gib * 1024**3 * ct.get("disk_used_pct", 0) / 100) if running else 0,
        "maxswap": int(cfg.get("swap", 512)) * 1024**2,
        "uptime": int(time.time() - started) if running and (started := ct.get("started_at")) else 0,
        "netin": 0,
        "netout": 0,
        "diskread": 0,
        "diskwrite": 0,
        "cpu": 0,
    }
    if ct.get("lock"):
        row["lock"] = ct["lock"]
    if cfg.get("template"):
        row["template"] = 1
    if cfg.get("tags"):
        row["tags"] = cfg["tags"]
    return row
