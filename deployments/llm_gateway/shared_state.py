"""Replica-side clients of the shared actors: breaker snapshot, token and budget leases.

None of these makes an actor call per request on the happy path: routing reads a
snapshot refreshed in the background, rate limits and the budget are spent from local
leases refilled in chunks, and outcomes are reported in batches (failures and probe
results at once, so a breaker opens promptly).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from actors.llm_gateway.breaker import BreakerBoard, BreakerEvent, BreakerView
from actors.llm_gateway.budget import BudgetLedger, utc_day
from actors.llm_gateway.ratelimit import RateLimiter
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, call

log = get_logger("llm_gateway")


async def flush_forever(flush: Callable[[], Awaitable[None]], interval: float, failure: str) -> None:
    """Call `flush` every `interval` seconds; a failure is logged and retried next time."""
    while True:
        await asyncio.sleep(interval)
        try:
            await flush()
        except Exception:
            log.warning(failure, exc_info=True)


class BreakerClient:
    def __init__(
        self,
        handle: ActorHandle[BreakerBoard],
        refresh_interval: float = 0.25,
        on_event: Callable[[BreakerEvent], Awaitable[None] | None] | None = None,
    ) -> None:
        self.handle = handle
        self.refresh_interval = refresh_interval
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
        snap = await call(self.handle, BreakerBoard.snapshot, self.version)
        if snap is not None:
            self.version = snap["version"]
            self.states = snap["breakers"]
            if self.on_snapshot is not None:
                self.on_snapshot(self.states)
        events = await call(self.handle, BreakerBoard.events, self._seq)
        for event in events:
            self._seq = max(self._seq, event["seq"])
            log.warning("breaker event", extra={"event": event["event"], "endpoint": event["endpoint"]})
            if self.on_event is not None:
                result = self.on_event(event)
                if asyncio.iscoroutine(result):
                    await result

    async def run(self) -> None:
        with contextlib.suppress(Exception):
            await self._skip_old_events()
        while True:
            try:
                await self.refresh()
            except Exception:
                log.warning("breaker snapshot refresh failed", exc_info=True)
            await asyncio.sleep(self.refresh_interval)

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

    def credit(self, key: str, amount: float) -> None:
        """Give back tokens reserved but not used (estimate above actual)."""
        slot = self._held.get(key)
        if slot is not None and amount > 0:
            slot[0] += amount

    async def flush(self) -> None:
        debits, self._debits = self._debits, {}
        for key, (capacity, period, amount) in debits.items():
            await call(self.handle, RateLimiter.debit, key, capacity, period, amount)
        now = time.monotonic()
        for key, slot in list(self._held.items()):
            if slot[0] > 0 and now - slot[1] >= self.idle_release:
                amount, slot[0] = slot[0], 0.0
                await call(self.handle, RateLimiter.release, key, amount)

    async def run(self, interval: float = 0.25) -> None:
        await flush_forever(self.flush, interval, "rate-limit lease flush failed")


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
            if self.allowance >= amount:
                self.allowance -= amount
                return True
            return False

    def settle(self, reserved: float, actual: float) -> None:
        self._roll()
        self.allowance += reserved - actual
        self.pending += actual

    def _apply(self, state: dict[str, Any]) -> None:
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

    async def flush(self) -> None:
        self._roll()
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

    async def run(self, interval: float = 0.25) -> None:
        await flush_forever(self.flush, interval, "budget flush failed")
