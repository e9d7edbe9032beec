"""The shared daily budget: leases never exceed the limit; the day rolls over at midnight UTC."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime

from actors.llm_gateway.budget import BudgetLedger
from actors.llm_gateway.ratelimit import RateLimiter
from rayfleet import state


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


async def test_concurrent_leases_never_exceed_the_limit():
    handle = state.actor(BudgetLedger, "test.budget.concurrent", 10.0, 8.0)
    day = (await handle.state.remote())["day"]

    async def replica(name: str) -> float:
        got = 0.0
        for _ in range(50):
            grant, _ = await handle.lease.remote(name, day, random.uniform(0.1, 1.0), 0.05)
            got += grant
            if grant:
                await handle.settle.remote(name, day, grant)
        return got

    totals = await asyncio.gather(*(replica(f"r{i}") for i in range(8)))
    st = await handle.state.remote()
    assert sum(totals) <= 10.0 + 1e-9
    assert st["spent"] <= 10.0 + 1e-9
    assert st["spent"] > 9.0


def test_soft_limit_event_once_and_midnight_rollover():
    clock = Clock(_ts("2026-03-01T23:59:00"))
    ledger = BudgetLedger(10.0, 4.0, clock=clock)
    day = ledger.state()["day"]
    grant, _ = ledger.lease("r", day, 5.0, 5.0)
    assert grant == 5.0
    ledger.settle("r", day, 5.0)
    assert [e["event"] for e in ledger.events()] == ["budget_threshold"]
    ledger.settle("r", day, 0.0)
    assert ledger.events() == []
    assert ledger.lease("r", day, 6.0, 6.0)[0] == 0.0
    clock.now = _ts("2026-03-02T00:00:01")
    st = ledger.state()
    assert st["day"] == "2026-03-02" and st["spent"] == 0.0
    assert ledger.lease("r", day, 1.0, 1.0)[0] == 0.0  # a lease for yesterday is refused
    assert ledger.lease("r", "2026-03-02", 6.0, 6.0)[0] == 6.0


def test_expired_leases_return_to_the_pool():
    clock = Clock(_ts("2026-03-01T12:00:00"))
    ledger = BudgetLedger(10.0, 9.0, lease_ttl=30, clock=clock)
    day = ledger.state()["day"]
    assert ledger.lease("dead", day, 10.0, 10.0)[0] == 10.0
    assert ledger.lease("live", day, 1.0, 1.0)[0] == 0.0
    clock.now += 31
    assert ledger.lease("live", day, 1.0, 1.0)[0] == 1.0


def test_restore_never_lowers_spend():
    ledger = BudgetLedger(10.0, 9.0)
    day = ledger.state()["day"]
    ledger.restore(day, 3.0)
    ledger.restore(day, 1.0)
    assert ledger.state()["spent"] == 3.0


async def test_a_restarted_ledger_has_a_new_epoch_and_replicas_restore_it_once():
    from deployments.llm_gateway.shared_state import BudgetLeases

    first = state.LocalActorHandle(BudgetLedger(10.0, 9.0))
    leases = BudgetLeases(first, 10.0)
    restarts: list[str] = []
    leases.on_ledger_restart = lambda: restarts.append("restore")
    assert await leases.reserve(2.0)
    leases.settle(2.0, 1.5)
    await leases.flush()
    await leases.flush()
    assert restarts == [] and leases.spent_known == 1.5

    restarted = BudgetLedger(10.0, 9.0)  # the actor came back empty, with a new epoch
    leases.handle = state.LocalActorHandle(restarted)
    await leases.flush()
    await leases.flush()
    assert restarts == ["restore"]
    restarted.restore(restarted.state()["day"], 1.5)  # what the replica's restore hands back
    assert restarted.state()["spent"] == 1.5


def test_token_bucket_grants_exactly_capacity_then_refills():
    clock = Clock(100.0)
    limiter = RateLimiter(clock=clock)
    granted = sum(limiter.acquire("k", 50, 60.0, 1, 1)[0] for _ in range(200))
    assert granted == 50
    ok, retry = limiter.acquire("k", 50, 60.0, 1, 1)
    assert ok == 0 and 1.1 < retry <= 1.21
    clock.now += 1.2
    assert limiter.acquire("k", 50, 60.0, 1, 1)[0] == 1
    limiter.release("k", 10)
    assert abs(limiter.level("k") - 10) < 1e-9
