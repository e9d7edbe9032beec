"""Proxmox VE's answers, typed: what `pvesh get ... --output-format json` returns for the paths the API reads.

The records declare the fields PVE documents for each path (every field optional, as PVE leaves out
what does not apply); the readers run the `pvesh get` and hand back the parsed JSON under its type.
"""

from __future__ import annotations

from typing import NamedTuple, TypedDict, cast

from . import commands as cmd
from .errors import CommandFailed
from .hosts import Steps
from .placement import RESOURCES


class ContainerEntry(TypedDict, total=False):
    """One row of ``/nodes/{node}/lxc`` (and the base of ``.../status/current``); a container's row
    of ``/cluster/resources`` adds ``id`` (``lxc/<vmid>``), ``node`` and ``maxcpu``."""

    id: str
    node: str
    maxcpu: float
    vmid: int
    name: str
    status: str
    type: str
    lock: str
    tags: str
    template: int
    cpu: float
    cpus: float
    mem: int
    maxmem: int
    swap: int
    maxswap: int
    disk: int
    maxdisk: int
    netin: int
    netout: int
    diskread: int
    diskwrite: int
    uptime: int


class ContainerStatus(ContainerEntry, total=False):
    """``/nodes/{node}/lxc/{vmid}/status/current``: the list row plus the HA state."""

    ha: dict[str, int | str]


class ContainerConfig(TypedDict, total=False):
    """``/nodes/{node}/lxc/{vmid}/config``: the options of the container's configuration file.

    Numbered options (``net0``..., ``mp0``...) beyond the first are read with ``.get(name)``.
    """

    hostname: str
    ostype: str
    arch: str
    memory: int
    swap: int
    cores: int
    cpulimit: float | str
    rootfs: str
    mp0: str
    net0: str
    features: str
    nameserver: str
    searchdomain: str
    unprivileged: int
    onboot: int
    protection: int
    lock: str
    tags: str
    description: str
    digest: str


class Snapshot(TypedDict, total=False):
    """One entry of ``/nodes/{node}/lxc/{vmid}/snapshot`` (the last is the pseudo-snapshot ``current``)."""

    name: str
    snaptime: int
    description: str
    parent: str
    running: int


class FirewallGroup(TypedDict, total=False):
    """One entry of ``/cluster/firewall/groups``."""

    group: str
    comment: str
    digest: str


FirewallRule = TypedDict(
    "FirewallRule",
    {
        "pos": int,
        "type": str,
        "action": str,
        "proto": str,
        "sport": str,
        "dport": str,
        "source": str,
        "dest": str,
        "enable": int,
        "comment": str,
        "iface": str,
        "macro": str,
        "log": str,
        "icmp-type": str,
        "digest": str,
    },
    total=False,
)
"""One rule of a security group or of a container's firewall (``.../firewall/rules``)."""


class FirewallOptions(TypedDict, total=False):
    """``/cluster/firewall/options`` and ``/nodes/{node}/lxc/{vmid}/firewall/options``."""

    enable: int
    policy_in: str
    policy_out: str
    digest: str


GROUPS = "/cluster/firewall/groups"


def container_path(node: str, vmid: str) -> str:
    return f"/nodes/{node}/lxc/{vmid}"


async def _get(steps: Steps, path: str) -> object:
    return await steps.json(cmd.pvesh("get", path, json_out=True))


async def containers(steps: Steps, node: str) -> list[ContainerEntry]:
    return cast(list[ContainerEntry], await _get(steps, f"/nodes/{node}/lxc"))


async def cluster_containers(steps: Steps) -> list[ContainerEntry]:
    """Every node's containers: the `lxc` rows of ``/cluster/resources --type vm``."""
    rows = await steps.json(RESOURCES)
    listing = (
        [row for row in rows if isinstance(row, dict) and row.get("type") == "lxc"] if isinstance(rows, list) else []
    )
    return cast(list[ContainerEntry], listing)


ALL_RESOURCES = ["pvesh", "get", "/cluster/resources", "--output-format", "json"]


class ClusterView(NamedTuple):
    """A cluster as a live node sees it: every node's containers, and the nodes it reports
    `offline` (their containers' rows say `status: unknown`, as PVE answers)."""

    containers: list[ContainerEntry]
    offline: list[str]


async def cluster_view(steps: Steps) -> ClusterView:
    """The `lxc` and `node` rows of one ``/cluster/resources`` read (every type)."""
    rows = await steps.json(ALL_RESOURCES)
    rows = [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []
    return ClusterView(
        cast(list[ContainerEntry], [row for row in rows if row.get("type") == "lxc"]),
        sorted(str(row.get("node")) for row in rows if row.get("type") == "node" and row.get("status") == "offline"),
    )


STATUS = ["pvesh", "get", "/cluster/status", "--output-format", "json"]


async def quorate(steps: Steps) -> bool | None:
    """The cluster row's `quorate` of ``/cluster/status`` (readable without quorum); None when there is no
    such row (a node outside any cluster) or the read failed."""
    try:
        rows = await steps.json(STATUS)
    except CommandFailed:
        return None
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and row.get("type") == "cluster" and "quorate" in row:
            return bool(int(row["quorate"]))
    return None


async def config(steps: Steps, node: str, vmid: str) -> ContainerConfig:
    return cast(ContainerConfig, await _get(steps, f"{container_path(node, vmid)}/config"))


async def status(steps: Steps, node: str, vmid: str) -> ContainerStatus:
    return cast(ContainerStatus, await _get(steps, f"{container_path(node, vmid)}/status/current"))


async def snapshots(steps: Steps, node: str, vmid: str) -> list[Snapshot]:
    return cast(list[Snapshot], await _get(steps, f"{container_path(node, vmid)}/snapshot"))


async def groups(steps: Steps) -> list[FirewallGroup]:
    return cast(list[FirewallGroup], await _get(steps, GROUPS))


async def group_rules(steps: Steps, name: str) -> list[FirewallRule]:
    return cast(list[FirewallRule], await _get(steps, f"{GROUPS}/{name}"))


async def container_rules(steps: Steps, node: str, vmid: str) -> list[FirewallRule]:
    return cast(list[FirewallRule], await _get(steps, f"{container_path(node, vmid)}/firewall/rules"))


async def container_firewall(steps: Steps, node: str, vmid: str) -> FirewallOptions:
    return cast(FirewallOptions, await _get(steps, f"{container_path(node, vmid)}/firewall/options"))


async def cluster_firewall(steps: Steps) -> FirewallOptions:
    return cast(FirewallOptions, await _get(steps, "/cluster/firewall/options"))
