"""A node's live capacity: `pvesh get /nodes/<node>/status` and the allocations of every guest on it.

The scale-up check needs what the node has (its CPUs and memory, from
`/nodes/<node>/status`: `cpuinfo.cpus`, `memory.total` in bytes) and what all
its running guests already hold, not only the containers the model manages:
`/nodes/<node>/lxc` and `/nodes/<node>/qemu` list each guest's `cpus` and
`maxmem` (bytes). A listing that fails is reported in `errors` (and the
configured capacity stands in for a failed status), never silently counted as
empty. The node's hardware changes rarely: the monitor keeps a good status
reading for `capacity_refresh` seconds; the guest listings are read every time
(the allocations change with every scaling decision).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from rayfleet.ssh import CommandResult

MB = 1024 * 1024
KINDS = ("lxc", "qemu")


def status_argv(node: str) -> list[str]:
    return ["pvesh", "get", f"/nodes/{node}/status", "--output-format", "json"]


def guests_argv(node: str, kind: str) -> list[str]:
    return ["pvesh", "get", f"/nodes/{node}/{kind}", "--output-format", "json"]


@dataclass
class NodeCapacity:
    node: str
    cores: int | None = None
    memory_mb: int | None = None
    read_at: float | None = None
    """When `cores` and `memory_mb` were read from `/nodes/<node>/status` (they are cached)."""
    guests: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Running guests as `lxc/<vmid>` / `qemu/<vmid>`: (cores, memory MB)."""
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _json(result: CommandResult, what: str, errors: list[str]) -> Any:
    if not result.ok:
        errors.append(f"{what}: {(result.stderr.strip() or f'exit {result.rc}')[:200]}")
        return None
    try:
        return json.loads(result.stdout)
    except ValueError:
        errors.append(f"{what}: not JSON")
        return None


def read_status(node: str, status: CommandResult, errors: list[str]) -> tuple[int, int] | None:
    """(CPUs, memory MB) from `/nodes/<node>/status`; None (and the reason in `errors`) when it cannot tell."""
    data = _json(status, f"pvesh get /nodes/{node}/status", errors)
    if not isinstance(data, dict):
        return None
    cpus = (data.get("cpuinfo") or {}).get("cpus")
    total = (data.get("memory") or {}).get("total")
    if isinstance(cpus, int) and cpus > 0 and isinstance(total, int) and total > 0:
        return cpus, total // MB
    errors.append(f"pvesh get /nodes/{node}/status: no cpuinfo.cpus or memory.total")
    return None


def read_guests(node: str, listings: dict[str, CommandResult], errors: list[str]) -> dict[str, tuple[int, int]]:
    """Every running guest's (cores, memory MB) from `/nodes/<node>/lxc` and `/qemu`."""
    guests: dict[str, tuple[int, int]] = {}
    for kind, result in listings.items():
        rows = _json(result, f"pvesh get /nodes/{node}/{kind}", errors)
        for row in rows if isinstance(rows, list) else []:
            if not isinstance(row, dict) or row.get("status") != "running":
                continue
            cpus, maxmem = row.get("cpus"), row.get("maxmem")
            if isinstance(cpus, int | float) and isinstance(maxmem, int):
                guests[f"{kind}/{row.get('vmid')}"] = (int(cpus), maxmem // MB)
    return guests
