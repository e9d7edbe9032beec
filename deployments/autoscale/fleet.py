"""The Proxmox nodes behind the API: `pct` over the shared SSH pool, and where each container lives."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from rayfleet.ssh import CommandResult, SSHHost, SSHPool

from .config import AutoscaleConfig
from .errors import ApiError
from .schemas import ID_TEXT


def parse_pct_list(text: str) -> dict[str, str]:
    """{vmid: status} from `pct list` output."""
    out: dict[str, str] = {}
    for line in text.splitlines()[1:]:
        words = line.split()
        if len(words) >= 2 and ID_TEXT.fullmatch(words[0]):
            out[words[0]] = words[1]
    return out


def parse_pct_config(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith("#") and not line.startswith("["):
            out[key.strip()] = value.strip()
        if line.startswith("["):
            break  # snapshot sections follow the current configuration
    return out


def classify(result: CommandResult) -> str:
    """The `reason` label of a failed command."""
    if result.timed_out or result.rc == 124:
        return "timeout"
    if result.rc == 255 and result.stderr.startswith("ssh:"):
        return "connection"
    text = result.stderr.lower()
    if "does not exist" in text:
        return "not_found"
    if "locked" in text:
        return "locked"
    if "parameter verification failed" in text or "400" in text:
        return "invalid"
    return "command_failed" if result.rc else "unknown"


class Fleet:
    """Runs commands on the configured nodes; finds a container's node with `pct list`."""

    def __init__(self, config: AutoscaleConfig, pool: SSHPool | None = None) -> None:
        self.config = config
        self.pool = pool or SSHPool()
        self._ssh: dict[str, SSHHost] = {}
        self._where: dict[str, str] = {}
        self._listed = 0.0
        self._lock = asyncio.Lock()

    def ssh(self, host: str) -> SSHHost:
        target = self._ssh.get(host)
        if target is None:
            target = self._ssh[host] = self.config.hosts[host].ssh()
        return target

    async def run(self, host: str, argv: Sequence[str], timeout: float | None = None) -> CommandResult:
        return await self.pool.run(host, self.ssh(host), argv, timeout or self.config.command_timeout)

    async def list_all(self) -> dict[str, CommandResult]:
        names = list(self.config.hosts)
        results = await asyncio.gather(*(self.run(h, ["pct", "list"]) for h in names))
        return dict(zip(names, results, strict=True))

    async def _refresh(self) -> None:
        where: dict[str, str] = {}
        for host, result in (await self.list_all()).items():
            if result.ok:
                where.update({vmid: host for vmid in parse_pct_list(result.stdout)})
        self._where = where
        self._listed = time.monotonic()

    async def locate(self, vmid: str) -> str:
        """The node holding `vmid`; 404 when no node has it."""
        host = self._where.get(vmid)
        if host is not None:
            return host
        async with self._lock:
            if vmid not in self._where and time.monotonic() - self._listed > 1.0:
                await self._refresh()
        host = self._where.get(vmid)
        if host is None:
            raise ApiError(404, f"Container {vmid} not found on any configured host")
        return host

    def forget(self, vmid: str) -> None:
        self._where.pop(vmid, None)

    async def close(self) -> None:
        await self.pool.close()
