"""The replica's side of the fleet actor: unwraps its envelopes into values or ApiErrors."""

from __future__ import annotations

from typing import Any

from deployments.mitigation.errors import ApiError


class FleetClient:
    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self._started = False

    async def ensure_started(self) -> None:
        if not self._started:
            await self.handle.ensure_started.remote()
            self._started = True

    @staticmethod
    def unwrap(envelope: dict[str, Any]) -> Any:
        if not envelope["ok"]:
            raise ApiError(envelope["status"], envelope["message"])
        return envelope["value"]

    async def node(self, node_id: str, method: str, *args: Any) -> Any:
        await self.ensure_started()
        return self.unwrap(await self.handle.call_node.remote(node_id, method, *args))

    async def call(self, method: str, *args: Any) -> Any:
        await self.ensure_started()
        return await getattr(self.handle, method).remote(*args)

    async def call_unwrapped(self, method: str, *args: Any) -> Any:
        return self.unwrap(await self.call(method, *args))
