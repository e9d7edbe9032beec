"""Circuit breaker state machine (spec 001 §3) and its actor, the breaker board."""

from __future__ import annotations

import asyncio

import pytest

from actors.llm_gateway.breaker import CLOSED, HALF, OPEN, BreakerBoard, CircuitBreaker
from rayfleet import state


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_consecutive_failures_only():
    br = CircuitBreaker(failure_threshold=3, recovery_timeout=10)
    for ok in (False, False, True, False, False):
        br.record(ok, 0.0)
    assert br.state == CLOSED and br.failures == 2
    br.record(False, 1.0)
    assert br.state == OPEN and br.events == ["circuit_open"]


def test_peek_never_hands_out_the_probe():
    br = CircuitBreaker(failure_threshold=1, recovery_timeout=10)
    br.record(False, 0.0)
    assert br.peek(5.0) == OPEN
    for _ in range(5):
        assert br.peek(10.0) == HALF
    assert br.probe_token is None
    assert br.acquire_probe(10.0, "t1") is True
    assert br.acquire_probe(10.0, "t2") is False


def test_probe_success_closes_and_reports_recovery():
    br = CircuitBreaker(failure_threshold=1, recovery_timeout=10)
    br.record(False, 0.0)
    br.acquire_probe(11.0, "p")
    br.record(True, 11.5, token="other")  # a stale request's outcome does not decide
    assert br.state == HALF
    br.record(True, 12.0, token="p")
    assert br.state == CLOSED and br.events == ["circuit_open", "endpoint_recovered"]


def test_probe_failure_reopens_and_probe_slot_times_out():
    br = CircuitBreaker(failure_threshold=1, recovery_timeout=10, probe_timeout=5)
    br.record(False, 0.0)
    assert br.acquire_probe(10.0, "p1")
    br.record(False, 11.0, token="p1")
    assert br.state == OPEN and br.peek(15.0) == OPEN
    assert br.acquire_probe(21.0, "p2")
    assert not br.acquire_probe(25.0, "p3")
    assert br.acquire_probe(26.5, "p4")  # the lost probe expired


def test_reset_from_any_state():
    br = CircuitBreaker(failure_threshold=1)
    br.record(False, 0.0)
    br.reset()
    assert br.state == CLOSED and br.failures == 0


def test_board_config_applied_at_creation_and_events():
    clock = Clock()
    board = BreakerBoard(failure_threshold=2, recovery_timeout=30, clock=clock)
    board.record("a", False)
    assert board.peek("a")["state"] == CLOSED
    board.record("a", False)
    assert board.peek("a")["state"] == OPEN
    assert [e["event"] for e in board.events()] == ["circuit_open"]
    snap = board.snapshot()
    assert board.snapshot(snap["version"]) is None
    clock.now += 30
    token = board.acquire_probe("a")
    assert token and board.acquire_probe("a") is None
    board.record("a", True, token)
    assert [e["event"] for e in board.events(1)] == ["endpoint_recovered"]


async def test_concurrent_callers_get_exactly_one_probe():
    clock = Clock()
    handle = state.actor(BreakerBoard, "test.breakers.probe", 1, 5.0, 30.0, clock=clock)
    await handle.record.remote("ep", False)
    clock.now += 5
    tokens = await asyncio.gather(*(handle.acquire_probe.remote("ep") for _ in range(200)))
    assert len([t for t in tokens if t]) == 1


def _health_events(board: BreakerBoard) -> list[str]:
    return [e["event"] for e in board.events() if e["event"].startswith("endpoint_")]


def test_health_marks_move_only_after_a_run_of_equal_probes():
    board = BreakerBoard(failure_threshold=100, clock=Clock())
    board.configure_health(unhealthy_threshold=3, healthy_threshold=2)
    board.record_health("a", True)  # unknown -> up: nothing was down, no event
    assert board.peek("a")["health"] == "up" and _health_events(board) == []
    for ok in (False, True) * 5 + (False, False):  # flapping, then two failures: still short of three
        board.record_health("a", ok, "HTTP 503")
    assert board.peek("a")["health"] == "up" and _health_events(board) == []
    board.record_health("a", False, "HTTP 503")
    assert board.peek("a")["health"] == "down" and _health_events(board) == ["endpoint_down"]
    for ok in (False, True, False, True, False):  # single successes do not bring it back
        board.record_health("a", ok, "HTTP 503")
    board.record_health("a", True)
    assert board.peek("a")["health"] == "down"
    board.record_health("a", True)
    assert board.peek("a")["health"] == "up" and _health_events(board) == ["endpoint_down", "endpoint_up"]
    assert board.events()[0]["reason"] == "HTTP 503"


def test_every_probe_still_feeds_the_breaker_whatever_the_mark():
    board = BreakerBoard(failure_threshold=2, recovery_timeout=10.0, clock=Clock())
    board.configure_health(unhealthy_threshold=5, healthy_threshold=1)
    board.record_health("a", False)
    board.record_health("a", False)
    view = board.peek("a")
    assert view["state"] == OPEN and view["health"] == "unknown"  # the breaker opened; the mark waits for 5
    assert [e["event"] for e in board.events()] == ["circuit_open"]


def test_thresholds_of_one_give_an_event_per_flap():
    board = BreakerBoard(failure_threshold=100)
    board.configure_health(1, 1)
    for ok in (False, True) * 3:
        board.record_health("a", ok)
    assert _health_events(board) == ["endpoint_down", "endpoint_up"] * 3


@pytest.mark.parametrize("thresholds", [(0, 1), (1, 0)])
def test_health_thresholds_below_one_are_refused(thresholds):
    with pytest.raises(ValueError, match="at least 1"):
        BreakerBoard().configure_health(*thresholds)


def test_thresholds_given_at_creation_apply_and_are_checked():
    board = BreakerBoard(failure_threshold=100, unhealthy_threshold=1, healthy_threshold=3)
    for ok in (False, True, True, True):
        board.record_health("a", ok)
    assert _health_events(board) == ["endpoint_down", "endpoint_up"]
    with pytest.raises(ValueError, match="at least 1"):
        BreakerBoard(unhealthy_threshold=0)
