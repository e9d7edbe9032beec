"""The replica's side of the per-key budgets (``KeyBudgets`` actor): local leases, batched settlements.

A request of a virtual key reserves its worst-case cost from this replica's lease of the
key's budget (``reserve``); when it ends, the actual cost is settled locally (``settle``) and
sent to the actor with every other key's in one call per ``flush``, which runs only while
something is to be sent or given back (``wake``). Only a lease that runs short calls the actor
on the request path. Every virtual key's spend is settled, budget or
not, so a budget set later with ``PATCH`` counts what the key spent before.

A lease follows the limits it was taken under: when a key's ``budget_daily`` or
``budget_total`` changes, what this replica holds of it goes back at the next flush and the
next request leases under the new limits.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from actors.llm_gateway.key_budgets import KeyBudgets
from rayfleet.state import ActorHandle, call
from rayfleet.tasks import Wake

LEASE_SHARE = 20  # a lease asks for 1/20 of the smaller limit (at least the request's reservation)


def limits_of(record: dict[str, Any]) -> tuple[float | None, float | None]:
    return record.get("budget_daily"), record.get("budget_total")


@dataclass
class _Held:
    limits: tuple[float | None, float | None]
    generation: int = 0  # grows when the limits change; a reservation settles into its own generation only
    allowance: float = 0.0
    last_used: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class KeyBudgetLeases:
    def __init__(self, handle: ActorHandle[KeyBudgets], idle_release: float = 1.0) -> None:
        self.handle = handle
        self.replica = uuid.uuid4().hex[:12]
        self.idle_release = idle_release
        self._held: dict[str, _Held] = {}
        self._pending: dict[str, list[float]] = {}  # key id -> [spent, release]
        self.wake = Wake()  # set when a settlement waits or an allowance is held (to give back once idle)

    def _slot(self, key_id: str, limits: tuple[float | None, float | None]) -> _Held:
        held = self._held.get(key_id)
        if held is None:
            held = self._held[key_id] = _Held(limits)
        elif held.limits != limits:  # the key's budget changed: give back what was leased under the old one
            self._pending.setdefault(key_id, [0.0, 0.0])[1] += max(0.0, held.allowance)
            held.allowance, held.limits, held.generation = 0.0, limits, held.generation + 1
            self.wake.set()
        return held

    async def reserve(self, record: dict[str, Any], amount: float) -> int | None:
        """Reserve ``amount`` USD of the key's budget: the lease's generation (for ``settle``), or None
        when the key has not that much left."""
        limits = limits_of(record)
        if limits == (None, None) or amount <= 0:
            return 0
        held = self._slot(record["id"], limits)
        held.last_used = time.monotonic()
        if held.allowance >= amount:
            held.allowance -= amount
            return held.generation
        async with held.lock:
            if held.allowance >= amount:
                held.allowance -= amount
                return held.generation
            need = amount - held.allowance
            smallest = min(v for v in limits if v is not None)
            want = max(need, smallest / LEASE_SHARE)
            daily, total = limits
            granted, _ = await call(
                self.handle, KeyBudgets.lease, self.replica, record["id"], {"daily": daily, "total": total}, need, want
            )
            held.allowance += granted
            if granted > 0:
                self.wake.set()
            if held.allowance >= amount:
                held.allowance -= amount
                return held.generation
            return None

    def settle(self, key_id: str, reserved: float, actual: float, generation: int = 0) -> None:
        """The request ended: ``actual`` USD spent of the ``reserved`` (the rest goes back to the lease it
        came from, or to the actor if the key's limits changed since)."""
        held = self._held.get(key_id)
        if held is not None and held.generation == generation:
            held.allowance += reserved - actual
        elif reserved > actual:
            self._pending.setdefault(key_id, [0.0, 0.0])[1] += reserved - actual
        if actual > 0:
            self._pending.setdefault(key_id, [0.0, 0.0])[0] += actual
        self.wake.set()

    async def flush(self) -> bool:
        """Send the settlements and give back allowances idle for ``idle_release`` s; True while one is held."""
        now = time.monotonic()
        for key_id, held in self._held.items():
            if held.allowance > 0 and now - held.last_used >= self.idle_release and not held.lock.locked():
                self._pending.setdefault(key_id, [0.0, 0.0])[1] += held.allowance
                held.allowance = 0.0
        if not self._pending:
            return self._holding()
        pending, self._pending = self._pending, {}
        try:
            await call(self.handle, KeyBudgets.settle, self.replica, pending)
        except Exception:
            for key_id, (spent, release) in pending.items():
                slot = self._pending.setdefault(key_id, [0.0, 0.0])
                slot[0] += spent
                slot[1] += release
            raise
        return self._holding()

    def _holding(self) -> bool:
        return any(held.allowance > 0 for held in self._held.values())

    async def usage(self, key_id: str) -> dict[str, Any]:
        """The key's spend as the actor knows it (this replica's unsent settlements pushed first)."""
        await self.flush()
        result: dict[str, Any] = await call(self.handle, KeyBudgets.usage, key_id)
        return result
