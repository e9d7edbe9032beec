"""What every router needs: config, the database, the shared actors. Stored on `app.state.ctx`."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request

from deployments.webfilter.config import WebfilterConfig
from deployments.webfilter.store import Store
from rayfleet.http import Network, client_ip


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

    async def db(self, fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def sync_proxy(self) -> dict[str, Any]:
        """Render the effective policy into Squid (and dnsmasq) and reconfigure."""
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
