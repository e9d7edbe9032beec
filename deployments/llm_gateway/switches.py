"""Replica-side views of the cluster-wide actors added by the security pipeline and the rings.

- ``ControlView``: the panic switch and the disabled plugins, polled every 0.25 s.
- ``ThreatView``: injection events batched to the threat ledger; the blocked actors it
  answers with are the local snapshot each request is checked against.
- ``LatencyFeed``: request traces batched to the latency board.

None of them calls an actor per request: requests read the local snapshot and append
to a local batch, the background steps (``refresh``/``flush``) talk to the actors.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from actors.llm_gateway.control import POLL_INTERVAL, ControlBoard, ControlState, Panic
from actors.llm_gateway.latency import LatencyBoard
from actors.llm_gateway.threats import ThreatLedger
from rayfleet.state import ActorHandle, call

MAX_PENDING = 10_000


class ControlView:
    interval = POLL_INTERVAL

    def __init__(self, handle: ActorHandle[ControlBoard]) -> None:
        self.handle = handle
        self.version = 0
        self.panic: Panic = {"active": False, "since": None, "reason": ""}
        self.disabled: frozenset[str] = frozenset()
        self.config_version = 0
        self.on_config: Callable[[dict[str, Any]], Awaitable[None]] | None = None

    async def apply(self, view: ControlState | None) -> None:
        if view is None:
            return
        self.version = view["version"]
        self.panic = view["panic"]
        self.disabled = frozenset(view["disabled_plugins"])
        config = view["config"]
        if config["version"] != self.config_version and self.on_config is not None:
            await self.on_config(config["sections"])
        self.config_version = config["version"]

    async def refresh(self) -> None:
        await self.apply(await call(self.handle, ControlBoard.state, self.version))


class ThreatView:
    interval = 0.2

    def __init__(self, handle: ActorHandle[ThreatLedger]) -> None:
        self.handle = handle
        self.blocked: dict[str, float] = {}
        self.pending: list[tuple[str, float]] = []

    def is_blocked(self, actor: str, now: float | None = None) -> float | None:
        """Seconds until ``actor``'s block ends, or None when it is not blocked."""
        until = self.blocked.get(actor)
        now = time.time() if now is None else now
        return until - now if until is not None and until > now else None

    def add(self, actor: str, score: float) -> None:
        if len(self.pending) < MAX_PENDING:
            self.pending.append((actor, score))

    async def flush(self) -> None:
        batch, self.pending = self.pending, []
        self.blocked = (
            await call(self.handle, ThreatLedger.record, batch)
            if batch
            else await call(self.handle, ThreatLedger.blocked)
        )


class LatencyFeed:
    interval = 0.5

    def __init__(self, handle: ActorHandle[LatencyBoard]) -> None:
        self.handle = handle
        self.pending: list[dict[str, Any]] = []

    def add(self, trace: dict[str, Any]) -> None:
        if len(self.pending) < MAX_PENDING:
            self.pending.append(trace)

    async def flush(self) -> None:
        if self.pending:
            batch, self.pending = self.pending, []
            await call(self.handle, LatencyBoard.add, batch)

    async def latency(self) -> dict[str, Any]:
        await self.flush()
        return await call(self.handle, LatencyBoard.latency)

    async def timeline(self) -> list[dict[str, Any]]:
        await self.flush()
        return await call(self.handle, LatencyBoard.timeline)
