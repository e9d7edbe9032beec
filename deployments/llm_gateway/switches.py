"""Replica-side views of the cluster-wide actors added by the security pipeline and the rings.

- ``ControlView``: the panic switch, the disabled plugins and the reloaded config sections,
  followed with a long-poll (``follow.py``): a change reaches the replica in one call.
- ``ThreatView``: injection events batched to the threat ledger; the blocked actors, followed
  with a long-poll, are the local snapshot each request is checked against.
- ``LatencyFeed``: request traces batched to the latency board.

None of them calls an actor per request: requests read the local snapshot and append
to a local batch, the background steps (``follow``/``flush``) talk to the actors. A batch is
flushed ``interval`` seconds after its first item (``wake``), never on an empty timer.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from actors.llm_gateway.changes import newer
from actors.llm_gateway.control import ControlBoard, ControlState, Panic
from actors.llm_gateway.latency import LatencyBoard
from actors.llm_gateway.threats import ThreatLedger
from deployments.llm_gateway.follow import follow
from rayfleet.state import ActorHandle, call
from rayfleet.tasks import Wake

MAX_PENDING = 10_000


class ControlView:
    def __init__(self, handle: ActorHandle[ControlBoard]) -> None:
        self.handle = handle
        self.version = 0
        self.panic: Panic = {"active": False, "since": None, "reason": ""}
        self.disabled: frozenset[str] = frozenset()
        self.config_version = 0
        self.on_config: Callable[[dict[str, Any]], Awaitable[None]] | None = None

    async def apply(self, view: ControlState | None) -> None:
        if view is None or not newer(view["version"], self.version):
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

    async def follow(self) -> None:
        """Follow the board's changes (a long-poll) until cancelled."""
        await follow(
            "control",
            lambda: self.version,
            lambda known, hold: call(self.handle, ControlBoard.wait_state, known, hold),
            self.apply,
            self.refresh,
        )


class ThreatView:
    interval = 0.2

    def __init__(self, handle: ActorHandle[ThreatLedger]) -> None:
        self.handle = handle
        self.blocked: dict[str, float] = {}
        self.version = -1  # of the ledger's blocks last applied
        self.pending: list[tuple[str, float]] = []
        self.wake = Wake()

    def is_blocked(self, actor: str, now: float | None = None) -> float | None:
        """Seconds until ``actor``'s block ends, or None when it is not blocked."""
        until = self.blocked.get(actor)
        now = time.time() if now is None else now
        return until - now if until is not None and until > now else None

    def add(self, actor: str, score: float) -> None:
        if len(self.pending) < MAX_PENDING:
            self.pending.append((actor, score))
            self.wake.set()

    def _take(self, answer: dict[str, Any]) -> None:
        if newer(answer["version"], self.version):
            self.version, self.blocked = answer["version"], answer["blocked"]

    async def flush(self) -> None:
        """Send the pending events, then read the blocks (this replica's events may have started one)."""
        batch, self.pending = self.pending, []
        if batch:
            try:
                await call(self.handle, ThreatLedger.record, batch)
            except Exception:
                self.pending = (batch + self.pending)[:MAX_PENDING]
                raise
        self._take(await call(self.handle, ThreatLedger.wait_blocked, -1, 0.0))

    async def follow(self) -> None:
        """Follow the ledger's blocks (a long-poll): a block another replica caused holds here at once."""
        await follow(
            "threats",
            lambda: self.version,
            lambda known, hold: call(self.handle, ThreatLedger.wait_blocked, known, hold),
            self._take,
            self.flush,
        )


class LatencyFeed:
    interval = 0.5

    def __init__(self, handle: ActorHandle[LatencyBoard]) -> None:
        self.handle = handle
        self.pending: list[dict[str, Any]] = []
        self.wake = Wake()

    def add(self, trace: dict[str, Any]) -> None:
        if len(self.pending) < MAX_PENDING:
            self.pending.append(trace)
            self.wake.set()

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
