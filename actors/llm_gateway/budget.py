"""The daily budget shared by every replica (UTC days), handed out in leases.

A replica leases a slice of the remaining budget, reserves each request's worst-case
cost from it locally, and reports what was actually spent. The ledger grants only what
is left after today's spend and every outstanding lease, so concurrent replicas cannot
overspend the daily limit together. Leases of replicas that stop reporting expire.
The day rolls over at midnight UTC while running: spend, leases and the soft-limit flag
start again from zero.

The ledger keeps nothing on disk: today's spend is in the gateway's records store.
Every state it returns carries an `epoch`, new each time the actor starts; a replica
that sees the epoch change (the actor was restarted, on this node or another) reads
today's spend from the store and hands it back with `restore`, so a restart never
forgets spend. Replicas follow the state with `wait_state(version)`, a long-poll answered when
today's spend or the limits change (`changes.py`), so each knows the cluster's spend, and a new
epoch, without a timer.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from actors.llm_gateway.changes import HOLD_SECONDS, Changes, instance_base
from rayfleet.state import unlocked


def utc_day(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d")


class BudgetLedger:
    def __init__(
        self,
        daily_limit: float = 50.0,
        soft_limit: float = 40.0,
        lease_ttl: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.daily_limit = daily_limit
        self.soft_limit = soft_limit
        self._lease_ttl = lease_ttl
        self._clock = clock
        self._day = utc_day(clock())
        self._spent = 0.0
        self._leases: dict[str, tuple[float, float]] = {}
        self._soft_fired = False
        self._events: list[dict[str, Any]] = []
        self._epoch = uuid.uuid4().hex
        self._version = instance_base()
        self._changes = Changes()

    def _bump(self) -> None:
        self._version += 1
        self._changes.notify()

    def configure(self, daily_limit: float, soft_limit: float) -> None:
        if (daily_limit, soft_limit) != (self.daily_limit, self.soft_limit):
            self.daily_limit, self.soft_limit = daily_limit, soft_limit
            self._bump()

    def _roll(self) -> float:
        now = self._clock()
        day = utc_day(now)
        if day != self._day:
            self._day, self._spent, self._leases, self._soft_fired = day, 0.0, {}, False
            self._bump()
        expired = [r for r, (_, seen) in self._leases.items() if now - seen > self._lease_ttl]
        for replica in expired:
            del self._leases[replica]
        return now

    def _outstanding(self) -> float:
        return sum(max(0.0, amount) for amount, _ in self._leases.values())

    def state(self) -> dict[str, Any]:
        self._roll()
        return {
            "day": self._day,
            "spent": self._spent,
            "outstanding": self._outstanding(),
            "daily_limit": self.daily_limit,
            "soft_limit": self.soft_limit,
            "epoch": self._epoch,
            "version": self._version,
        }

    @unlocked
    async def wait_state(self, known_version: int = -1, timeout: float = HOLD_SECONDS) -> dict[str, Any]:
        """``state()`` once it differs from version ``known_version`` (today's spend, the day or the
        limits changed), or after ``timeout`` s: a long-poll."""
        self._roll()
        await self._changes.wait(lambda: self._version == known_version, timeout)
        return self.state()

    def lease(self, replica: str, day: str, want: float, need: float) -> tuple[float, dict[str, Any]]:
        """Grant up to ``want`` (at least ``need`` or nothing) from what is left today."""
        now = self._roll()
        if day != self._day:
            return 0.0, self.state()
        held, _ = self._leases.get(replica, (0.0, now))
        free = self.daily_limit - self._spent - self._outstanding()
        grant = min(want, free) if free >= need else 0.0
        grant = max(0.0, grant)
        self._leases[replica] = (held + grant, now)
        return grant, self.state()

    def settle(self, replica: str, day: str, spent: float, release: float = 0.0) -> dict[str, Any]:
        """Record ``spent`` (paid from the replica's lease) and give back ``release`` unused."""
        now = self._roll()
        if day == self._day:
            self._spent += spent
            if spent:
                self._bump()
            held, _ = self._leases.get(replica, (0.0, now))
            self._leases[replica] = (max(0.0, held - spent - release), now)
            if not self._soft_fired and self._spent >= self.soft_limit:
                self._soft_fired = True
                self._events.append(
                    {
                        "event": "budget_threshold",
                        "day": self._day,
                        "spent": self._spent,
                        "soft_limit": self.soft_limit,
                        "timestamp": now,
                    }
                )
        return self.state()

    def restore(self, day: str, spent: float) -> dict[str, Any]:
        """After a restart: today's spend as recorded in the store (never lowers it)."""
        self._roll()
        if day == self._day and spent > self._spent:
            self._spent = spent
            self._bump()
        return self.state()

    def events(self) -> list[dict[str, Any]]:
        out, self._events = self._events, []
        return out
