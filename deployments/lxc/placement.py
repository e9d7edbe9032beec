"""Where a zone's containers live when the zone is a Proxmox cluster.

`pct` acts only on the node holding the container (elsewhere it answers "Configuration file
'nodes/<node>/lxc/<vmid>.conf' does not exist"), so a command that names a container runs on
that node. A node that does not answer (its SSH connection refused or timed out) is noted:
cluster-wide commands and the map's reads go to the next configured node that answers, and
a command for a container on it is answered 503 naming the node. The container → node map comes from `pvesh get /cluster/resources --type vm`
(any node answers for the whole cluster); it is cached and read again on a miss: a container
it does not know, or a node that answers that the container is not there (it was migrated by
someone else). A migration through this API updates it at once.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence

from rayfleet.ssh import CommandResult

from .config import ZoneConfig

NODE_PATH = re.compile(r"^/nodes/([^/]+)/lxc/(\d+)(/.*)?$")
ELSEWHERE = re.compile(r"Configuration file 'nodes/([^/']+)/lxc/(\d+)\.conf' does not exist")
SKIPPED = re.compile(r"skip external VMs: ([0-9, ]+)")
RESOURCES = ["pvesh", "get", "/cluster/resources", "--type", "vm", "--output-format", "json"]

Runner = Callable[[Sequence[str]], Awaitable[CommandResult]]


def container_of(argv: Sequence[str]) -> str | None:
    """The existing container a command acts on, if it names one."""
    tool = argv[0] if argv else ""
    if tool == "pct" and len(argv) >= 3 and argv[1] not in ("list", "create") and argv[2].isdigit():
        return argv[2]
    if tool == "vzdump":
        return next((word for word in argv[1:] if word.isdigit()), None)
    if tool == "pvesh" and len(argv) >= 3 and (match := NODE_PATH.match(argv[2])):
        return match.group(2)
    return None


def any_node(argv: Sequence[str]) -> bool:
    """A command every node of the cluster answers alike, so it may go to another node when the
    entry does not answer: `pvesh` (any node proxies a path to the node it names) and `pct create`
    (the container is created on the node that answered). The entry's own commands (reboot, its
    status files, `pvecm`, `systemctl`, `pveam` on its node-local storage, `/px/exec`) may not."""
    return list(argv[:1]) == ["pvesh"] or list(argv[:2]) == ["pct", "create"]


def on_node(argv: Sequence[str], node: str) -> list[str]:
    """`argv` with a `pvesh` path's node segment set to `node` (other commands are unchanged)."""
    words = list(argv)
    if words[:1] == ["pvesh"] and len(words) >= 3 and (match := NODE_PATH.match(words[2])):
        words[2] = f"/nodes/{node}/lxc/{match.group(2)}{match.group(3) or ''}"
    return words


def missing_here(result: CommandResult, vmid: str) -> bool:
    """The node answered that the container is not on it: `pct`'s missing configuration, or
    vzdump skipping it as another node's guest (which vzdump does not count as an error)."""
    match = ELSEWHERE.search(result.stderr)
    if not result.ok and match is not None and match.group(2) == vmid:
        return True
    skipped = SKIPPED.search(result.stdout + result.stderr)
    return skipped is not None and vmid in re.split(r"[,\s]+", skipped.group(1))


class Placement:
    """A zone's cluster: how to reach each node, and the container → node map, shared by every
    request to the zone."""

    def __init__(self, nodes: Mapping[str, ZoneConfig]) -> None:
        self.nodes = dict(nodes)
        self.where: dict[str, str] = {}
        self.down: set[str] = set()
        """Hosts (node names; "" for the zone's entry) whose last connection was refused or timed
        out: tried last for cluster-wide commands until one answers again."""
        self.generation = 0
        self._lock = asyncio.Lock()

    async def refresh(self, run: Runner, seen: int | None = None) -> None:
        """Read `/cluster/resources` again, unless another caller did since generation `seen`."""
        async with self._lock:
            if seen is not None and self.generation != seen:
                return
            result = await run(RESOURCES)
            if not result.ok:
                return
            try:
                rows = json.loads(result.stdout)
            except ValueError:
                return
            self.learn(rows if isinstance(rows, list) else [])

    def learn(self, rows: list[object]) -> None:
        """Take the map from `/cluster/resources` rows (a listing through this API feeds it too)."""
        self.where = {
            str(row["vmid"]): str(row["node"])
            for row in rows
            if isinstance(row, dict) and row.get("type") == "lxc" and "vmid" in row and "node" in row
        }
        self.generation += 1

    async def locate(self, vmid: str, run: Runner) -> str | None:
        """The node of `vmid`, read from the cluster when not cached; None when no node has it."""
        if vmid not in self.where:
            await self.refresh(run, self.generation)
        return self.where.get(vmid)

    async def relocate(self, vmid: str, run: Runner, stale: str) -> str | None:
        """After `stale` said the container is not there: where the cluster says it is now."""
        if self.where.get(vmid) == stale:
            await self.refresh(run, self.generation)
        node = self.where.get(vmid)
        return node if node != stale else None

    def answered(self, label: str, answered: bool) -> None:
        """Note whether the host `label` (a node name, "" for the entry) answered its last connection."""
        if answered:
            self.down.discard(label)
        else:
            self.down.add(label)

    def moved(self, vmid: str, node: str) -> None:
        self.where[vmid] = node
