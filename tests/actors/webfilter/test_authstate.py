"""The shared authentication state: single-use tokens, revocation, the sliding lockout window, scan slots.

Time is the test's: `time.time` in the module is replaced by a clock the test moves.
"""

from __future__ import annotations

import pytest

from actors.webfilter import authstate
from actors.webfilter.authstate import AuthState


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(authstate.time, "time", fake)
    return fake


def test_a_stream_token_works_once_and_only_within_its_lifetime(clock):
    state = AuthState(ws_ttl=120)
    issued = state.issue_ws_token()
    token = str(issued["token"])
    assert len(token) == 64 and issued["expires_in"] == 120
    assert state.consume_ws_token(token) is True
    assert state.consume_ws_token(token) is False
    late = str(state.issue_ws_token()["token"])
    clock.now += 121
    assert state.consume_ws_token(late) is False
    assert state.consume_ws_token("f" * 64) is False


def test_a_refresh_token_id_is_accepted_once_and_forgotten_when_it_expires(clock):
    state = AuthState()
    assert state.revoke("jti-1", clock.now + 60) is True
    assert state.revoke("jti-1", clock.now + 60) is False  # a replay
    assert state.is_revoked("jti-1")
    clock.now += 61
    assert not state.is_revoked("jti-1")
    assert state.revoke("jti-2", clock.now + 10) and "jti-1" not in state.revoked  # pruned on the way


def test_the_nth_failure_in_the_window_locks_the_address_until_the_oldest_leaves_it(clock):
    state = AuthState(attempts=3, window_seconds=300)
    assert state.record_failure("10.0.0.1") == 0
    clock.now += 100
    assert state.record_failure("10.0.0.1") == 0
    clock.now += 100
    assert state.record_failure("10.0.0.1") == 100  # the first failure leaves the window in 100 s
    assert state.retry_after("10.0.0.2") == 0  # per address
    clock.now += 99
    assert state.retry_after("10.0.0.1") == 1
    clock.now += 1
    assert state.retry_after("10.0.0.1") == 0  # two failures left in the window: below the limit


def test_locked_lists_the_addresses_with_failures_and_clear_forgets_one(clock):
    state = AuthState(attempts=2, window_seconds=60)
    state.record_failure("10.0.0.1")
    state.record_failure("10.0.0.1")
    state.record_failure("10.0.0.2")
    listed = {row["ip"]: row for row in state.locked()}
    assert listed["10.0.0.1"]["failures"] == 2 and listed["10.0.0.1"]["retry_after"] == 60
    assert listed["10.0.0.2"]["retry_after"] == 0 and listed["10.0.0.2"]["last_failure"] == clock.now
    assert state.clear("10.0.0.1") is True and state.clear("10.0.0.1") is False
    clock.now += 61
    assert state.locked() == []  # failures older than the window are pruned


def test_at_most_max_scans_run_at_once():
    state = AuthState(max_scans=2)
    assert state.acquire_scan() and state.acquire_scan()
    assert not state.acquire_scan()
    state.release_scan()
    assert state.acquire_scan()
    for _ in range(5):
        state.release_scan()
    assert state.scans == 0  # never below zero
