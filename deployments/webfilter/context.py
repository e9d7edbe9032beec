"""What every router needs: config, the database, the shared actors. Stored on `app.state.ctx`."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import Request

from deployments.webfilter.config import WebfilterConfig
from deployments.webfilter.store import Store
from rayfleet.http import Network, client_ip


class Coalesced:
    """Runs an apply for every caller, but callers that arrive while one is running share the next one.

    A caller's change is committed before it asks, and the shared run reads the policy only once it
    starts (after the running one), so it carries every change of the callers that joined it: N
    concurrent edits cost at most two reconfigurations, not N. The run is a task of its own, so a
    caller that goes away does not cancel it for the others."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._pending: asyncio.Future[dict[str, Any]] | None = None
        self.runs = 0

    async def __call__(self, apply: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._start(apply))
        return await asyncio.shield(self._pending)

    async def _start(self, apply: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        async with self._lock:
            self._pending = None  # from here on, a new caller's change may be too late for this run
            self.runs += 1
            return await apply()


@dataclass
class Context:
    config: WebfilterConfig
    store: Store
    auth: Any  # AuthState actor handle
    logs: Any  # LogStore actor handle
    proxy: Any  # ProxyOwner actor handle
    trusted: list[Network]
    ca_cert: Path  # the interception CA the API serves (and Squid bumps with when ssl_bump_enabled)
    ca_key: Path
    public_check: Any = None  # callable(ip) -> bool for import URLs; injectable in tests
    applies: Coalesced = field(default_factory=Coalesced)

    async def db(self, fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def sync_proxy(self) -> dict[str, Any]:
        """Render the effective policy into Squid (and dnsmasq) and reconfigure; concurrent callers share runs
        (`Coalesced`). Returns once Squid enforces a policy that includes the caller's committed change."""
        return await self.applies(self._apply)

    async def _apply(self) -> dict[str, Any]:
        policy = await self.db(self.store.effective_policy)
        result: dict[str, Any] = await self.proxy.apply.remote(policy)
        return result

    async def interception(self) -> dict[str, Any]:
        """Whether Squid really bumps HTTPS now, with the CA this API serves (not just the setting)."""
        status = await self.proxy.status.remote()
        served = hashlib.sha256(await asyncio.to_thread(self.ca_cert.read_bytes)).hexdigest()
        return {
            "interception_enabled": bool(status["ssl_bump"]) and status["ssl_bump_ca_sha256"] == served,
            "squid_running": bool(status["running"]),
            "ca_sha256": served,
        }


def ctx(request: Request) -> Context:
    context: Context = request.app.state.ctx
    return context


def peer(request: Request) -> str:
    return client_ip(request, ctx(request).trusted)
