"""What every router needs: config, the database, the shared actors. Stored on `app.state.ctx`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
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
    public_check: Any = None  # callable(ip) -> bool for import URLs; injectable in tests

    async def db(self, fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def sync_proxy(self) -> dict[str, Any]:
        """Render the effective policy into Squid (and dnsmasq) and reconfigure."""
        policy = await self.db(self.store.effective_policy)
        result: dict[str, Any] = await self.proxy.apply.remote(policy)
        return result


def ctx(request: Request) -> Context:
    context: Context = request.app.state.ctx
    return context


def peer(request: Request) -> str:
    return client_ip(request, ctx(request).trusted)
