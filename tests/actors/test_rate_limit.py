"""The shared sliding-window actor: exact counting, window sliding, reset and Retry-After."""

import asyncio

import pytest

from actors.rate_limit import US, RateLimitWindow, WindowDecision
from rayfleet import state


class Clock:
    def __init__(self, start_s: float = 1_700_000_000.0) -> None:
        self.now_us = int(start_s * US)

    def advance(self, seconds: float) -> None:
        self.now_us += int(seconds * US)

    def __call__(self) -> float:
        return self.now_us / US


@pytest.fixture
def clocked():
    clock = Clock()
    return RateLimitWindow(clock=clock), clock


def test_exact_limit_then_denied(clocked):
    window, clock = clocked
    decisions = []
    for _ in range(5):
        decisions.append(window.hit("ip", 5, 60))
        clock.advance(1)
    assert [d.allowed for d in decisions] == [True] * 5
    assert [d.remaining for d in decisions] == [4, 3, 2, 1, 0]
    denied = window.hit("ip", 5, 60)
    assert not denied.allowed and denied.remaining == 0 and denied.count == 5
    # the oldest hit was at t0, now is t0+5 s: a slot frees at t0+60 → 55 s
    assert denied.retry_after == 55
    assert denied.reset_epoch == 1_700_000_060


def test_window_slides_one_hit_at_a_time(clocked):
    window, clock = clocked
    for _ in range(3):
        window.hit("ip", 3, 10)
        clock.advance(2)  # hits at 0, 2, 4; now 6
    assert not window.hit("ip", 3, 10).allowed
    clock.advance(4)  # now 10: the hit at 0 is exactly one window old → expired
    assert window.hit("ip", 3, 10).allowed
    assert not window.hit("ip", 3, 10).allowed
    clock.advance(2)  # now 12: the hit at 2 expires
    decision = window.hit("ip", 3, 10)
    assert decision.allowed and decision.remaining == 0


def test_denied_hits_are_not_counted(clocked):
    window, clock = clocked
    window.hit("ip", 1, 10)
    for _ in range(50):
        assert not window.hit("ip", 1, 10).allowed
    clock.advance(10)
    assert window.hit("ip", 1, 10).allowed


def test_keys_are_independent_and_swept(clocked):
    window, clock = clocked
    window._sweep_every = 1
    assert window.hit("a", 1, 5).allowed and window.hit("b", 1, 5).allowed
    assert not window.hit("a", 1, 5).allowed
    assert window.size() == 2
    clock.advance(6)
    window.hit("c", 1, 5)
    assert window.size() == 1


def test_retry_after_rounds_up_and_is_at_least_one():
    d = WindowDecision(allowed=False, limit=1, count=1, now_us=10 * US, reset_us=10 * US + 1)
    assert d.retry_after == 1
    d = WindowDecision(allowed=False, limit=1, count=1, now_us=10 * US, reset_us=12 * US + 500_000)
    assert d.retry_after == 3 and d.reset_epoch == 13


def test_peek_record_reset(clocked):
    window, _clock = clocked
    assert window.record("login:ip", 300) == 1
    assert window.record("login:ip", 300) == 2
    assert window.peek("login:ip", 2, 300).allowed is False
    assert window.peek("login:ip", 3, 300).allowed is True
    assert window.reset("login:ip") is True and window.reset("login:ip") is False
    with pytest.raises(ValueError):
        window.hit("x", 1, 0)


async def test_concurrent_hits_through_the_state_handle_are_atomic():
    handle = state.actor(RateLimitWindow, "rate_limit_test")
    results = await asyncio.gather(*(handle.hit.remote("ip", 100, 60) for _ in range(250)))
    assert sum(r.allowed for r in results) == 100
    assert sorted(r.count for r in results if r.allowed) == list(range(1, 101))


def test_hit_many_decides_in_order(clocked):
    window, _ = clocked
    decisions = window.hit_many(["a", "b", "a", "a"], 2, 60)
    assert [(d.allowed, d.count) for d in decisions] == [(True, 1), (True, 1), (True, 2), (False, 2)]


def test_a_weighted_hit_counts_as_that_many_hits_all_or_none(clocked):
    window, clock = clocked
    first = window.hit("bulk", 10, 60, cost=4)
    assert (first.allowed, first.count, first.remaining) == (True, 4, 6)
    clock.advance(10)
    second = window.hit("bulk", 10, 60, cost=3)
    assert (second.allowed, second.count) == (True, 7)
    refused = window.hit("bulk", 10, 60, cost=5)  # 3 left: nothing is recorded
    assert (refused.allowed, refused.count) == (False, 7)
    # 5 fit once 2 leave the window; the first four left together at t0 + 60
    assert refused.reset_us == first.now_us + 60 * US
    assert window.hit("bulk", 10, 60, cost=3).allowed  # exactly what was left
    assert not window.hit("bulk", 10, 60).allowed


def test_weighted_refusal_waits_for_enough_of_the_oldest_hits(clocked):
    window, clock = clocked
    stamps = []
    for _ in range(5):
        stamps.append(window.hit("k", 5, 60).now_us)
        clock.advance(1)
    refused = window.hit("k", 5, 60, cost=3)
    assert not refused.allowed and refused.reset_us == stamps[2] + 60 * US
    with pytest.raises(ValueError):
        window.hit("k", 5, 60, cost=0)


def test_hit_many_carries_costs(clocked):
    window, _ = clocked
    decisions = window.hit_many(["a", "a", "b"], 5, 60, [3, 3, 5])
    assert [d.allowed for d in decisions] == [True, False, True]
    assert [d.count for d in decisions] == [3, 3, 5]
