"""Reaching one hypervisor host: command steps, per-container locks, VMIDs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextvars import ContextVar
from typing import Any, Protocol

from actors.lxc.locks import HostLocks
from rayfleet.ssh import CommandResult, SSHPool, SSHTarget, Unanswered
from rayfleet.state import ActorHandle, actor, call

from . import commands as cmd
from .config import LxcConfig, ZoneConfig
from .errors import CommandFailed, HTTPProblem, NodeDown
from .placement import Placement, any_node, container_of, missing_here, on_node

LockFactory = Callable[[str], ActorHandle[HostLocks]]
JOB_OUTPUT: ContextVar[Callable[[str], None] | None] = ContextVar("lxc_job_output", default=None)
"""Set inside a job (deployments/lxc/jobs.py): where its host commands' output lines go, each
command announced by a `$ argv` line."""


class TargetSource(Protocol):
    """What makes targets (`LxcService`): a pickled target is rebuilt by the one of the process it
    is unpickled in (a job in the runner actor; see `deployments/lxc/jobs.py`)."""

    def target(self, region: object = None, az: object = None) -> Target: ...


def rebuilt_target(source: TargetSource, region: str, az: str, node: str | None) -> Target:
    target = source.target(region, az)
    return target if node is None else target.node_target(node)


class Target:
    """One (region, az) host with the pool, lock actor and timeout it uses."""

    def __init__(
        self,
        config: LxcConfig,
        pool: SSHPool,
        locks: ActorHandle[HostLocks],
        region: str,
        az: str,
        zone: ZoneConfig,
        cluster: Placement | None = None,
        node: str | None = None,
        source: TargetSource | None = None,
    ) -> None:
        self.source = source
        self.config = config
        self.pool = pool
        self.locks = locks
        self.region = region
        self.az = az
        self.zone = zone
        self.key = f"{region}/{az}" + (f"@{node}" if node else "")
        self.cluster = cluster
        self.node_name = node

    def each_node(self) -> list[Target]:
        """The zone's hosts: one per node of a cluster (its own SSH address), else this one."""
        if self.cluster is None:
            return [self]
        return [self.node_target(name) for name in self.cluster.nodes]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as where it points (its source, region, az, node), never its pool or lock handle."""
        if self.source is None:
            raise TypeError(f"a Target made without its source cannot be pickled ({self.key})")
        return (rebuilt_target, (self.source, self.region, self.az, self.node_name))

    @property
    def timeout(self) -> float:
        return self.config.api.command_timeout

    async def run(self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        """Run `argv`; in a cluster, a command naming a container runs on the node holding it, and
        a cluster-wide one on the first configured host that answers."""
        vmid = container_of(argv) if self.cluster is not None else None
        if self.cluster is None or vmid is None:
            if self.cluster is not None and not any_node(argv):
                return await self._entry_only(argv, stdin, timeout)
            return await self._run_entry(argv, stdin, timeout)
        node = await self.cluster.locate(vmid, self._lookup)
        result = await self._run_on(node, vmid, argv, stdin, timeout)
        if node is not None and missing_here(result, vmid):
            moved_to = await self.cluster.relocate(vmid, self._lookup, node)
            if moved_to is not None:
                result = await self._run_on(moved_to, vmid, argv, stdin, timeout)
        if result.ok and list(argv[:2]) == ["pct", "migrate"] and len(argv) >= 4:
            self.cluster.moved(vmid, argv[3])
        return result

    def _entries(self) -> list[tuple[str, str, SSHTarget]]:
        """Where a cluster-wide command can run, as (label, pool key, host): the zone's entry, then
        every node at another address; the ones that did not answer last time go last."""
        assert self.cluster is not None
        entry = (self.zone.host, self.zone.effective_port())
        hosts: list[tuple[str, str, SSHTarget]] = [("", self.key, self.zone)]
        hosts += [
            (name, f"{self.key}@{name}", host)
            for name, host in self.cluster.nodes.items()
            if (host.host, host.effective_port()) != entry
        ]
        down = self.cluster.down
        return sorted(hosts, key=lambda h: h[0] in down)

    def _address(self) -> str:
        return f"{self.zone.host}:{self.zone.effective_port()}"

    def _entry_label(self) -> str:
        """The entry's address, and the configured node at that address when there is one."""
        entry = (self.zone.host, self.zone.effective_port())
        nodes = self.cluster.nodes.items() if self.cluster is not None else ()
        name = next((n for n, h in nodes if (h.host, h.effective_port()) == entry), None)
        return self._address() + (f", node {name}" if name else "")

    def unanswered(self, result: CommandResult) -> NodeDown:
        """The 503 for a host of this target that did not answer `result`'s command."""
        why = result.stderr.strip()
        if self.cluster is not None:
            return NodeDown(f"the entry host of {self.key} ({self._entry_label()}) did not answer: {why}")
        if self.node_name is not None:
            zone = f"{self.region}/{self.az}"
            return NodeDown(f"node '{self.node_name}' of {zone} ({self._address()}) did not answer: {why}")
        return NodeDown(f"the host of {self.key} ({self._address()}) did not answer: {why}")

    async def _answering(self, send: Callable[[str, SSHTarget], Awaitable[CommandResult]]) -> CommandResult:
        """`send` to the entry, else to the next host whenever one did not answer (the command
        never ran there, so it is safe to send again). A single host (a zone without nodes, or one
        node of a cluster): its answer, 503 when it did not answer."""
        if self.cluster is None:
            answer = await send(self.key, self.zone)
            if answer.unreachable:
                raise self.unanswered(answer)
            return answer
        tried: list[str] = []
        result: CommandResult | None = None
        for label, key, host in self._entries():
            result = await send(key, host)
            self.cluster.answered(label, not result.unreachable)
            if not result.unreachable:
                return result
            tried.append(label or f"{self.zone.host}:{self.zone.effective_port()}")
        assert result is not None
        raise NodeDown(
            f"no node of the cluster {self.key} answered (tried {', '.join(tried)}): {result.stderr.strip()}"
        )

    async def _run_entry(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        return await self._answering(lambda key, host: self._pooled(key, host, argv, stdin, timeout))

    async def _entry_only(self, argv: Sequence[str], stdin: str | None, timeout: float | None) -> CommandResult:
        """A command of the entry host itself (never sent to another node): 503 when it does not answer."""
        return await self._on_entry(lambda key, host: self._pooled(key, host, argv, stdin, timeout))

    async def _on_entry(self, send: Callable[[str, SSHTarget], Awaitable[CommandResult]]) -> CommandResult:
        if self.cluster is None:
            return await self._answering(send)
        result = await send(self.key, self.zone)
        self.cluster.answered("", not result.unreachable)
        if result.unreachable:
            raise self.unanswered(result)
        return result

    async def transfer(self, put: Callable[[str, SSHTarget], Awaitable[None]], anywhere: bool = False) -> str:
        """A file transfer, `put(pool key, host)`, to the entry host, or with `anywhere` (a storage
        every node shares) to the next host that answers, as a cluster-wide command; the pool key of
        the host that took it. 503 when the host (or no host) answered."""

        async def send(key: str, host: SSHTarget) -> CommandResult:
            try:
                await put(key, host)
            except Unanswered as exc:
                return CommandResult((), "", str(exc), 255, unreachable=True)
            return CommandResult((), key, "", 0)

        return (await (self._answering(send) if anywhere else self._on_entry(send))).stdout

    async def _lookup(self, argv: Sequence[str]) -> CommandResult:
        """A read of the cluster's map on a node that answers (not part of any job's output)."""
        return await self._answering(lambda key, host: self.pool.run(key, host, argv, self.timeout))

    async def _pooled(
        self, key: str, host: SSHTarget, argv: Sequence[str], stdin: str | None, timeout: float | None
    ) -> CommandResult:
        sink = JOB_OUTPUT.get()
        if sink is not None:
            sink("$ " + shlex.join(argv))
        result = await self.pool.run(key, host, argv, timeout or self.timeout, stdin, sink)
        if sink is not None and result.unreachable:  # the command never ran: say why
            sink(result.stderr.strip())
        return result

    async def _run_on(
        self, node: str | None, vmid: str, argv: Sequence[str], stdin: str | None, timeout: float | None
    ) -> CommandResult:
        assert self.cluster is not None
        if node is None:  # no node has it: the entry node answers as Proxmox does
            return await self._run_entry(argv, stdin, timeout)
        host = self.cluster.nodes.get(node)
        if host is None:
            return CommandResult(
                tuple(argv), "", f"node '{node}' of the cluster is not among {self.key}'s configured nodes", 255
            )
        result = await self._pooled(f"{self.key}@{node}", host, on_node(argv, node), stdin, timeout)
        self.cluster.answered(node, not result.unreachable)
        if result.unreachable:
            raise NodeDown(
                f"container {vmid} is on node '{node}' of {self.key}, which did not answer: {result.stderr.strip()}"
            )
        return result

    def node_target(self, node: str) -> Target:
        """One node of the cluster as a host of its own (its commands are sent there, never elsewhere)."""
        assert self.cluster is not None
        host = self.cluster.nodes.get(node)
        if host is None:
            raise CommandFailed(f"node '{node}' of the cluster is not among {self.key}'s configured nodes", "", 255)
        return Target(self.config, self.pool, self.locks, self.region, self.az, host, None, node, self.source)

    async def holding(self, vmid: str) -> Target:
        """Where `vmid`'s files are: in a cluster, the node holding it (the entry when no node has
        it, so the host answers as Proxmox does); else this host."""
        if self.cluster is None:
            return self
        node = await self.cluster.locate(vmid, self._lookup)
        return self if node is None else self.node_target(node)

    async def unreachable_nodes(self, skip: Collection[str] = ()) -> dict[str, str]:
        """The cluster's nodes (but `skip`) whose SSH server does not answer now (name -> the
        connection error), whatever the cluster's own view says; a pooled connection that is open
        counts as an answer."""
        assert self.cluster is not None
        names = [name for name in self.cluster.nodes if name not in skip]
        errors = await asyncio.gather(*(self.pool.unanswered(f"{self.key}@{n}", self.cluster.nodes[n]) for n in names))
        for name, error in zip(names, errors, strict=True):
            self.cluster.answered(name, error is None)
        return {name: error for name, error in zip(names, errors, strict=True) if error is not None}

    async def node(self, vmid: str | None = None) -> str:
        """The node holding `vmid` in a cluster; else the host's node name (short `hostname`, cached;
        in a cluster, of the first host that answers)."""
        if vmid is not None and self.cluster is not None:
            found = await self.cluster.locate(vmid, self._lookup)
            if found is not None:
                return found
        result = await self._answering(lambda key, host: self.pool.fact(key, host, "node", ["hostname"], self.timeout))
        if not result.ok:
            raise CommandFailed(result.stderr, result.stdout, result.rc)
        return result.stdout.strip().split(".")[0]

    def steps(self) -> Steps:
        return Steps(self)

    @contextlib.asynccontextmanager
    async def locked(self, vmids: Sequence[str]) -> AsyncIterator[None]:
        """Hold the per-container locks of `vmids` for the duration of an operation."""
        keys = sorted({f"ct:{v}" for v in vmids})
        owner = uuid.uuid4().hex
        deadline = time.monotonic() + self.timeout
        delay = 0.02
        while not await call(self.locks, HostLocks.try_acquire, keys, owner, self.config.lock_ttl):
            if time.monotonic() > deadline:
                raise HTTPProblem(409, f"container {', '.join(vmids)} is busy with another operation")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
        try:
            yield
        finally:
            await call(self.locks, HostLocks.release, keys, owner)

    async def allocate_vmid(self, owner: str) -> int:
        """A VMID from `pvesh get /cluster/nextid`, reserved against concurrent creations."""
        result = await self.run(cmd.nextid())
        if not result.ok or not result.stdout.strip().isdigit():
            raise CommandFailed(result.stderr or "pvesh returned no id", result.stdout, result.rc or 1)
        candidate = int(result.stdout.strip())
        for _ in range(100):
            if await call(self.locks, HostLocks.reserve_vmid, candidate, owner, self.config.lock_ttl):
                return candidate
            candidate += 1
            while True:
                check = await self.run(cmd.nextid(candidate))
                if check.ok:
                    break
                if "already exists" not in check.stderr:
                    raise CommandFailed(check.stderr, check.stdout, check.rc)
                candidate += 1
        raise HTTPProblem(409, "could not reserve a free VMID")

    async def release_vmid(self, vmid: int, owner: str) -> None:
        await call(self.locks, HostLocks.release_vmid, vmid, owner)


class Steps:
    """Run commands in order; the first failure raises with everything so far as output."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.out: list[str] = []

    async def run(
        self,
        argv: Sequence[str],
        stdin: str | None = None,
        ok: Sequence[int] = (0,),
        timeout: float | None = None,
        keep_stderr: bool = False,
    ) -> CommandResult:
        result = await self.target.run(argv, stdin=stdin, timeout=timeout)
        if result.rc not in ok:
            raise CommandFailed(result.stderr, self._joined(result.stdout), result.rc)
        self.note(result.stdout)
        if keep_stderr:
            self.note(result.stderr)
        return result

    async def json(self, argv: Sequence[str]) -> object:
        result = await self.target.run(argv)
        if not result.ok:
            raise CommandFailed(result.stderr, result.stdout, result.rc)
        try:
            parsed: object = json.loads(result.stdout)
            return parsed
        except ValueError:
            raise CommandFailed("the host answered with malformed JSON", result.stdout, 1) from None

    def note(self, text: str) -> None:
        if text and text.strip():
            self.out.append(text.strip())

    def _joined(self, extra: str = "") -> str:
        parts = self.out + ([extra.strip()] if extra and extra.strip() else [])
        return "\n".join(parts)

    def text(self) -> str:
        return self._joined()


def default_lock_factory(name: str) -> ActorHandle[HostLocks]:
    return actor(HostLocks, name)


def lock_actor_name(region: str, az: str) -> str:
    return f"lxc-locks-{region}-{az}"
