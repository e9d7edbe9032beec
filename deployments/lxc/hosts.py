"""Reaching one hypervisor host: command steps, per-container locks, VMIDs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence

from actors.lxc.locks import HostLocks
from rayfleet.ssh import CommandResult, SSHPool
from rayfleet.state import ActorHandle, actor, call

from . import commands as cmd
from .config import LxcConfig, ZoneConfig
from .errors import CommandFailed, HTTPProblem

LockFactory = Callable[[str], ActorHandle[HostLocks]]


class Target:
    """One (region, az) host with the pool, lock actor and timeout it uses."""

    def __init__(
        self, config: LxcConfig, pool: SSHPool, locks: ActorHandle[HostLocks], region: str, az: str, zone: ZoneConfig
    ) -> None:
        self.config = config
        self.pool = pool
        self.locks = locks
        self.region = region
        self.az = az
        self.zone = zone
        self.key = f"{region}/{az}"

    @property
    def timeout(self) -> float:
        return self.config.api.command_timeout

    async def run(self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        return await self.pool.run(self.key, self.zone, argv, timeout or self.timeout, stdin)

    async def node(self) -> str:
        """The node name as the cluster knows it (short `hostname`), cached per pool."""
        result = await self.pool.fact(self.key, self.zone, "node", ["hostname"], self.timeout)
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
