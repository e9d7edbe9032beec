"""Per-key budgets (daily and total USD): leases never grant past a limit, spend is durable."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from actors.llm_gateway.key_budgets import KeyBudgets
from rayfleet import state


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _store(tmp_path) -> dict[str, str]:
    return {"type": "sqlite", "sqlite_path": str(tmp_path / "gw.db"), "dsn_env": "", "dsn": ""}


TOTAL = {"daily": None, "total": 1.0}


async def test_concurrent_replicas_never_lease_past_the_total(tmp_path):
    handle = state.actor(KeyBudgets, "test.key_budgets.concurrent", _store(tmp_path))

    async def replica(name: str) -> float:
        held = 0.0
        for _ in range(40):
            granted, _ = await handle.lease.remote(name, "vk_1", TOTAL, 0.05, 0.1)
            held += granted
        return held

    held = await asyncio.gather(*(replica(f"r{i}") for i in range(5)))
    assert abs(sum(held) - 1.0) < 1e-9  # exactly what is left, never more
    assert (await handle.lease.remote("r9", "vk_1", TOTAL, 0.01, 0.01))[0] == 0.0
    await handle.settle.remote("r0", {"vk_1": [held[0], 0.0]})  # r0 spent all it held
    usage = await handle.usage.remote("vk_1")
    assert abs(usage["spent_total"] - held[0]) < 1e-9 and usage["outstanding"] < 1.0


def test_the_daily_limit_rolls_over_at_midnight_and_the_total_does_not(tmp_path):
    clock = Clock(_ts("2026-03-01T23:59:00"))
    board = KeyBudgets(_store(tmp_path), clock=clock)
    limits = {"daily": 1.0, "total": 1.5}
    granted, _ = board.lease("r", "vk", limits, 1.0, 1.0)
    assert granted == 1.0
    board.settle("r", {"vk": [1.0, 0.0]})
    assert board.lease("r", "vk", limits, 0.1, 0.1)[0] == 0.0  # today's limit is used up
    clock.now = _ts("2026-03-02T00:00:01")
    assert board.lease("r", "vk", limits, 1.0, 1.0)[0] == 0.0  # a new day, but the total has 0.5 left
    granted, usage = board.lease("r", "vk", limits, 0.5, 0.5)
    assert granted == 0.5 and usage["spent_today"] == 0.0 and usage["spent_total"] == 1.0


def test_spend_and_outstanding_leases_survive_a_restart(tmp_path):
    board = KeyBudgets(_store(tmp_path))
    assert board.lease("r1", "vk", TOTAL, 0.6, 0.6)[0] == 0.6
    board.settle("r1", {"vk": [0.2, 0.0]})  # spent 0.2 of the 0.6 held; 0.4 still out with r1
    restarted = KeyBudgets(_store(tmp_path))  # the actor was killed and came back
    usage = restarted.usage("vk")
    assert usage["spent_total"] == 0.2 and abs(usage["outstanding"] - 0.4) < 1e-9
    assert restarted.lease("r2", "vk", TOTAL, 0.5, 0.5)[0] == 0.0  # only 0.4 is free
    assert restarted.lease("r2", "vk", TOTAL, 0.4, 0.4)[0] == 0.4
    restarted.settle("r1", {"vk": [0.4, 0.0]})
    assert abs(KeyBudgets(_store(tmp_path)).usage("vk")["spent_total"] - 0.6) < 1e-9


def test_a_silent_replicas_lease_expires(tmp_path):
    clock = Clock(1000.0)
    board = KeyBudgets(_store(tmp_path), lease_ttl=30.0, clock=clock)
    assert board.lease("gone", "vk", TOTAL, 1.0, 1.0)[0] == 1.0
    assert board.lease("r", "vk", TOTAL, 0.1, 0.1)[0] == 0.0
    clock.now += 31
    assert board.lease("r", "vk", TOTAL, 0.1, 0.1)[0] == 0.1


def test_a_release_gives_the_unused_lease_back(tmp_path):
    board = KeyBudgets(_store(tmp_path))
    assert board.lease("r1", "vk", TOTAL, 1.0, 1.0)[0] == 1.0
    board.settle("r1", {"vk": [0.25, 0.75]})
    assert board.lease("r2", "vk", TOTAL, 0.75, 0.75)[0] == 0.75
    usage = board.usage("vk")
    assert (usage["spent_today"], usage["spent_total"], usage["outstanding"]) == (0.25, 0.25, 0.75)
