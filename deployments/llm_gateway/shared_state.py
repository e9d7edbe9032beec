"""Replica-side clients of the shared actors: breaker snapshot, token and budget leases.

None of these makes an actor call per request on the happy path: routing reads a
snapshot the breaker board pushes (a long-poll, ``follow.py``), rate limits and the budget are
spent from local leases refilled in chunks, and outcomes are reported in batches (failures and
probe results at once, so a breaker opens promptly). The leases' flushes run only when there is
something to send or to give back (``wake``, flushed by ``BackgroundTasks.when``); an idle
replica makes no call for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from actors.llm_gateway.breaker import BreakerBoard, BreakerEvent, BreakerSnapshot, BreakerView
from actors.llm_gateway.budget import BudgetLedger, utc_day
from actors.llm_gateway.changes import newer
from actors.llm_gateway.ratelimit import RateLimiter
from deployments.llm_gateway.follow import follow
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, call
from rayfleet.tasks import Wake

log = get_logger("llm_gateway")


class BreakerClient:
    def __init__(
        self,
        handle: ActorHandle[BreakerBoard],
        on_event: Callable[[BreakerEvent], Awaitable[None] | None] | None = None,
    ) -> None:
        self.handle = handle
        self.version = -1
        self.states: dict[str, BreakerView] = {}
        self._seq = 0
        self.on_event = on_event
        self.on_snapshot: Callable[[dict[str, BreakerView]], None] | None = None

    def decision(self, endpoint: str, now: float) -> str:
        """``ok`` (closed), ``probe`` (recovery due: try to acquire the probe) or ``skip``."""
        view = self.states.get(endpoint)
        if view is None or view["state"] == "CLOSED":
            return "ok"
        retry_at = view.get("retry_at") or 0.0
        if now >= retry_at and not (view.get("probe_out") and view["state"] == "HALF"):
            return "probe"
        return "skip"

    def retry_after(self, endpoints: list[str], now: float) -> float:
        views = [self.states.get(e) for e in endpoints]
        times = [(view["retry_at"] if view else None) or now for view in views]
        return max(0.0, min(times, default=now) - now)

    async def acquire_probe(self, endpoint: str) -> str | None:
        token = await call(self.handle, BreakerBoard.acquire_probe, endpoint)
        view = await call(self.handle, BreakerBoard.peek, endpoint)
        self.states[endpoint] = view
        return token

    async def report(self, endpoint: str, ok: bool, token: str | None = None) -> None:
        view = self.states.get(endpoint)
        if ok and token is None and (view is None or (view["state"] == "CLOSED" and not view["failures"])):
            return
        try:
            self.states[endpoint] = await call(self.handle, BreakerBoard.record, endpoint, ok, token)
        except Exception:
            log.warning("breaker report failed", extra={"endpoint": endpoint})

    async def refresh(self) -> None:
        """Read the snapshot (if it changed) and the events since the last ones seen."""
        self._take(await call(self.handle, BreakerBoard.snapshot, self.version))
        await self._read_events()

    def _take(self, snap: BreakerSnapshot | None) -> bool:
        if snap is None:
            return False
        if self.version != -1 and snap["version"] >> 32 != self.version >> 32:
            self._seq = 0  # a restarted board (``instance_base``) numbers its events from 1 again: relay them all
        self.version = snap["version"]
        self.states = snap["breakers"]
        if self.on_snapshot is not None:
            self.on_snapshot(self.states)
        return True

    async def _pushed(self, snap: BreakerSnapshot | None) -> None:
        if self._take(snap):  # every event comes with a version change
            await self._read_events()

    async def _read_events(self) -> None:
        """Relay the events after the last one relayed, once each: two reads may overlap (the long-poll's
        and a ``refresh``), so an event a read returns is skipped when the other one relayed it already."""
        events = await call(self.handle, BreakerBoard.events, self._seq)
        for event in events:
            if event["seq"] <= self._seq:
                continue
            self._seq = event["seq"]
            log.warning("breaker event", extra={"event": event["event"], "endpoint": event["endpoint"]})
            if self.on_event is not None:
                result = self.on_event(event)
                if asyncio.iscoroutine(result):
                    await result

    async def run(self) -> None:
        """Follow the board's changes (a long-poll) until cancelled."""
        with contextlib.suppress(Exception):
            await self._skip_old_events()
        await follow(
            "breakers",
            lambda: self.version,
            lambda known, hold: call(self.handle, BreakerBoard.wait_snapshot, known, hold),
            self._pushed,
            self.refresh,
        )

    async def _skip_old_events(self) -> None:
        events = await call(self.handle, BreakerBoard.events, 0)
        if events:
            self._seq = events[-1]["seq"]


class TokenLeases:
    """Local share of the shared token buckets (client rpm, endpoint rpm and tpm)."""

    def __init__(self, handle: ActorHandle[RateLimiter], idle_release: float = 1.0) -> None:
        self.handle = handle
        self.idle_release = idle_release
        self._held: dict[str, list[float]] = {}  # key -> [tokens, last_used]
        self._locks: dict[str, asyncio.Lock] = {}
        self._debits: dict[str, tuple[float, float, float]] = {}
        self.wake = Wake()  # set when a debit waits or tokens are held (to give back once idle)

    async def take(self, key: str, capacity: float, period: float, amount: float = 1.0) -> tuple[bool, float]:
        """Spend ``amount`` tokens of bucket ``key``: (allowed, retry_after seconds)."""
        slot = self._held.setdefault(key, [0.0, 0.0])
        now = time.monotonic()
        if slot[0] >= amount:
            slot[0] -= amount
            slot[1] = now
            return True, 0.0
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if slot[0] >= amount:
                slot[0] -= amount
                slot[1] = now
                return True, 0.0
            need = amount - slot[0]
            want = max(need, capacity / 20.0)
            granted, retry = await call(self.handle, RateLimiter.acquire, key, capacity, period, need, want)
            slot[0] += granted
            if granted > 0:
                self.wake.set()
            if slot[0] >= amount:
                slot[0] -= amount
                slot[1] = now
                return True, 0.0
            return False, max(retry, 0.001)

    def debit(self, key: str, capacity: float, period: float, amount: float) -> None:
        """Charge extra tokens after the fact (actual usage above the estimate)."""
        if amount <= 0:
            return
        slot = self._held.get(key)
        if slot is not None and slot[0] >= amount:
            slot[0] -= amount
            return
        _, _, prior = self._debits.get(key, (capacity, period, 0.0))
        self._debits[key] = (capacity, period, prior + amount)
        self.wake.set()

    def credit(self, key: str, amount: float) -> None:
        """Give back tokens reserved but not used (estimate above actual)."""
        slot = self._held.get(key)
        if slot is not None and amount > 0:
            slot[0] += amount
            self.wake.set()

    async def flush(self) -> bool:
        """Send the debits and give back tokens idle for ``idle_release`` s; True while tokens are still held."""
        debits, self._debits = self._debits, {}
        for key, (capacity, period, amount) in debits.items():
            await call(self.handle, RateLimiter.debit, key, capacity, period, amount)
        now = time.monotonic()
        for key, slot in list(self._held.items()):
            if slot[0] > 0 and now - slot[1] >= self.idle_release:
                amount, slot[0] = slot[0], 0.0
                await call(self.handle, RateLimiter.release, key, amount)
        return any(slot[0] > 0 for slot in self._held.values())


class BudgetLeases:
    """Local slice of today's budget: reserve worst-case cost, settle actual cost."""

    def __init__(self, handle: ActorHandle[BudgetLedger], daily_limit: float, idle_release: float = 1.0) -> None:
        self.handle = handle
        self.replica = uuid.uuid4().hex[:12]
        self.daily_limit = daily_limit
        self.chunk = max(daily_limit / 100.0, 0.0)
        self.idle_release = idle_release
        self.allowance = 0.0
        self.day = utc_day(time.time())
        self.pending = 0.0
        self.spent_known = 0.0
        self._last_used = 0.0
        self._lock = asyncio.Lock()
        self.on_state: Callable[[dict[str, Any]], None] | None = None
        # called when the ledger's epoch changes (its actor restarted): restore today's spend
        self.on_ledger_restart: Callable[[], None] | None = None
        self._epoch: str | None = None
        self.version = -1  # of the ledger's state last applied
        self.wake = Wake()  # set when spend waits to be settled or an allowance is held

    def _roll(self) -> None:
        today = utc_day(time.time())
        if today != self.day:
            self.day, self.allowance, self.pending, self.spent_known = today, 0.0, 0.0, 0.0

    def spent_fraction(self) -> float:
        if self.daily_limit <= 0:
            return 1.0
        return (self.spent_known + self.pending) / self.daily_limit

    async def reserve(self, amount: float) -> bool:
        self._roll()
        self._last_used = time.monotonic()
        if amount <= 0:
            return True
        if self.allowance >= amount:
            self.allowance -= amount
            return True
        async with self._lock:
            if self.allowance >= amount:
                self.allowance -= amount
                return True
            need = amount - self.allowance
            granted, state = await call(
                self.handle, BudgetLedger.lease, self.replica, self.day, max(need, self.chunk), need
            )
            self._apply(state)
            self.allowance += granted
            if granted > 0:
                self.wake.set()
            if self.allowance >= amount:
                self.allowance -= amount
                return True
            return False

    def settle(self, reserved: float, actual: float) -> None:
        self._roll()
        self.allowance += reserved - actual
        self.pending += actual
        self.wake.set()

    def _apply(self, state: dict[str, Any]) -> None:
        version = state.get("version")
        if version is not None:
            if not newer(version, self.version):  # an answer overtaken by a later one
                return
            self.version = version
        epoch = state.get("epoch")
        if epoch is not None and epoch != self._epoch:
            restarted = self._epoch is not None
            self._epoch = epoch
            if restarted and self.on_ledger_restart is not None:
                self.on_ledger_restart()
        if state.get("day") == self.day:
            self.spent_known = float(state["spent"])
        if self.on_state is not None:
            self.on_state(state)

    async def flush(self) -> bool:
        """Settle the spend and give back an allowance idle for ``idle_release`` s; True while one is held."""
        self._roll()
        if not self.pending and self.allowance <= 0:
            return False
        release = 0.0
        if self.allowance > 0 and time.monotonic() - self._last_used >= self.idle_release:
            release, self.allowance = self.allowance, 0.0
        spent, self.pending = self.pending, 0.0
        try:
            state = await call(self.handle, BudgetLedger.settle, self.replica, self.day, spent, release)
        except Exception:
            self.pending += spent
            self.allowance += release
            raise
        self._apply(state)
        return self.allowance > 0

    async def refresh(self) -> None:
        """Read the ledger's state (today's spend of every replica, its epoch)."""
        self._apply(await call(self.handle, BudgetLedger.wait_state, -1, 0.0))

    async def follow(self) -> None:
        """Follow the ledger's state (a long-poll): the cluster's spend, and a restart (a new epoch) at once."""
        await follow(
            "budget",
            lambda: self.version,
            lambda known, hold: call(self.handle, BudgetLedger.wait_state, known, hold),
            self._apply,
            self.refresh,
        )
