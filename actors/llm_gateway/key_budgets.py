"""Per-key budgets (``budget_daily``, ``budget_total`` in USD), shared by every replica, handed out in leases.

The pattern of ``BudgetLedger``, per virtual key: a replica leases a slice of what the key
has left, reserves each request's worst-case cost from it locally, and reports what was
actually spent (``settle``, batched for all keys). A lease is granted only from what is left
after the key's spend and every outstanding lease, so replicas together never go past a
limit while each request costs at most its reservation.

Durable (``rayfleet.durable``, stream ``llm_gateway/key_budgets``): every lease and every
settlement is recorded before it is answered, so a restarted actor knows each key's spend
(today's and in total) and the leases replicas still hold. Leases of a replica that stops
reporting expire after ``lease_ttl`` seconds. Days are UTC; the daily spend starts from
zero at midnight, the total never does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from actors.llm_gateway.budget import utc_day
from actors.llm_gateway.durable_store import record_store
from rayfleet.durable import DurableState, Op

STREAM = "llm_gateway/key_budgets"
Limits = Mapping[str, float | None]  # {"daily": USD or None, "total": USD or None}


def _initial() -> dict[str, Any]:
    return {"keys": {}, "leases": {}}


def _spend(state: dict[str, Any], key_id: str, day: str, amount: float) -> None:
    rec = state["keys"].setdefault(key_id, {"total": 0.0, "day": day, "today": 0.0})
    if rec["day"] != day:
        rec["day"], rec["today"] = day, 0.0
    rec["total"] += amount
    rec["today"] += amount


def _apply(state: dict[str, Any], op: Op) -> None:
    leases = state["leases"].setdefault(op["replica"], {})
    if op["op"] == "lease":
        held = leases.get(op["key"], [0.0, op["at"]])[0]
        leases[op["key"]] = [held + op["amount"], op["at"]]
    elif op["op"] == "settle":
        for key_id, (spent, release) in op["entries"].items():
            _spend(state, key_id, op["day"], spent)
            held = leases.get(key_id, [0.0, op["at"]])[0]
            leases[key_id] = [max(0.0, held - spent - release), op["at"]]
    else:
        raise ValueError(f"not a key budget operation: {op['op']!r}")


def _copy(state: dict[str, Any]) -> dict[str, Any]:
    return {
        "keys": {k: dict(v) for k, v in state["keys"].items()},
        "leases": {r: {k: list(v) for k, v in held.items()} for r, held in state["leases"].items()},
    }


class KeyBudgets:
    """The actor. ``store``: the gateway's storage spec (``durable_store``); ``None``: the platform's store."""

    def __init__(
        self,
        store: dict[str, Any] | None = None,
        lease_ttl: float = 30.0,
        clock: Callable[[], float] = time.time,
        stream: str = STREAM,
    ) -> None:
        self._store_spec, self._lease_ttl, self._clock, self._stream = store, lease_ttl, clock, stream
        self._durable: DurableState[dict[str, Any]] | None = None

    def _record(self) -> DurableState[dict[str, Any]]:
        if self._durable is None:
            self._durable = DurableState(
                record_store(self._store_spec), self._stream, initial=_initial, apply=_apply, dump=_copy, load=_copy
            )
        return self._durable

    def _expire(self, now: float) -> None:
        """Forget the leases of replicas silent for ``lease_ttl`` (not recorded: replay expires them again)."""
        for held in self._record().state["leases"].values():
            for key_id in [k for k, (_, seen) in held.items() if now - seen > self._lease_ttl]:
                del held[key_id]

    def _outstanding(self, key_id: str) -> float:
        return float(sum(held[key_id][0] for held in self._record().state["leases"].values() if key_id in held))

    def usage(self, key_id: str) -> dict[str, Any]:
        """The key's spend today (UTC) and in total, and what replicas hold leased."""
        now = self._clock()
        self._expire(now)
        return self._usage(key_id, utc_day(now))

    def _usage(self, key_id: str, day: str) -> dict[str, Any]:
        rec = self._record().state["keys"].get(key_id)
        today = rec["today"] if rec is not None and rec["day"] == day else 0.0
        return {
            "key_id": key_id,
            "day": day,
            "spent_today": today,
            "spent_total": rec["total"] if rec is not None else 0.0,
            "outstanding": self._outstanding(key_id),
        }

    def lease(
        self, replica: str, key_id: str, limits: Limits, need: float, want: float
    ) -> tuple[float, dict[str, Any]]:
        """Grant up to ``want`` USD (at least ``need`` or nothing) of what the key has left under ``limits``."""
        usage = self.usage(key_id)
        free = float("inf")
        if limits.get("daily") is not None:
            free = min(free, float(limits["daily"] or 0.0) - usage["spent_today"] - usage["outstanding"])
        if limits.get("total") is not None:
            free = min(free, float(limits["total"] or 0.0) - usage["spent_total"] - usage["outstanding"])
        grant = max(0.0, min(want, free)) if free >= need else 0.0
        if grant > 0:
            self._record().record(
                {"op": "lease", "replica": replica, "key": key_id, "amount": grant, "at": self._clock()}
            )
            usage["outstanding"] += grant
        return grant, usage

    def settle(self, replica: str, entries: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
        """``entries``: key id → [spent, released unused]; spent is paid from the replica's lease."""
        now = self._clock()
        clean = {k: [max(0.0, float(s)), max(0.0, float(r))] for k, (s, r) in entries.items() if s > 0 or r > 0}
        if clean:
            self._record().record(
                {"op": "settle", "replica": replica, "day": utc_day(now), "at": now, "entries": clean}
            )
        self._expire(now)
        day = utc_day(now)
        return {key_id: self._usage(key_id, day) for key_id in entries}
