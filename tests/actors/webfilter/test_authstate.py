"""The shared authentication state: single-use tokens, revocation, the sliding lockout window, scan slots;
revocations and lockouts survive a restart of the actor (its process killed).

Time is the test's: `time.time` in the module is replaced by a clock the test moves.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from actors.webfilter import authstate


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def dsn(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'durable.sqlite3'}"


@pytest.fixture
def AuthState(dsn: str):  # the class, bound to this test's store
    return functools.partial(authstate.AuthState, durable_dsn=dsn)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(authstate.time, "time", fake)
    return fake


def test_a_stream_token_works_once_and_only_within_its_lifetime(clock, AuthState):
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


def test_a_refresh_token_id_is_accepted_once_and_forgotten_when_it_expires(clock, AuthState):
    state = AuthState()
    assert state.revoke("jti-1", clock.now + 60) is True
    assert state.revoke("jti-1", clock.now + 60) is False  # a replay
    assert state.is_revoked("jti-1")
    clock.now += 61
    assert not state.is_revoked("jti-1")
    assert state.revoke("jti-2", clock.now + 10) and "jti-1" not in state.revoked  # pruned on the way


def test_the_nth_failure_in_the_window_locks_the_address_until_the_oldest_leaves_it(clock, AuthState):
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


def test_locked_lists_the_addresses_with_failures_and_clear_forgets_one(clock, AuthState):
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


def test_at_most_max_scans_run_at_once(AuthState):
    state = AuthState(max_scans=2)
    assert state.acquire_scan() and state.acquire_scan()
    assert not state.acquire_scan()
    state.release_scan()
    assert state.acquire_scan()
    for _ in range(5):
        state.release_scan()
    assert state.scans == 0  # never below zero


OWNER = """
import sys, time
from actors.webfilter.authstate import AuthState
state = AuthState(attempts=3, window_seconds=600, durable_dsn=sys.argv[1])
assert state.revoke("logged-out", time.time() + 3600)
for _ in range(3):
    state.record_failure("198.18.0.7")
print(state.retry_after("198.18.0.7"), flush=True)
sys.stdin.read()  # serve until killed
"""


def test_a_revoked_token_and_a_lockout_survive_the_actor_process_being_killed(dsn):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, dsn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert owner.stdout is not None
    locked_for = int(owner.stdout.readline())
    assert 595 <= locked_for <= 600
    owner.send_signal(signal.SIGKILL)  # no shutdown, no flush: what it acknowledged must already be stored
    owner.wait()
    restarted = authstate.AuthState(attempts=3, window_seconds=600, durable_dsn=dsn)
    assert restarted.is_revoked("logged-out")
    assert restarted.revoke("logged-out", 0) is False  # a replayed refresh token is still refused
    assert not restarted.is_revoked("never-revoked")
    retry = restarted.retry_after("198.18.0.7")
    assert 0 < retry <= locked_for  # still locked, the window counted from the original failures
    assert restarted.locked()[0]["failures"] == 3


def test_expiry_is_kept_across_a_restart_and_expired_entries_are_swept(dsn, clock):
    first = authstate.AuthState(attempts=2, window_seconds=60, durable_dsn=dsn)
    first.revoke("short", clock.now + 30)
    first.record_failure("10.0.0.9")
    first.record_failure("10.0.0.9")
    clock.now += 31
    again = authstate.AuthState(attempts=2, window_seconds=60, durable_dsn=dsn)
    assert not again.is_revoked("short")  # expired while the actor was down
    assert again.retry_after("10.0.0.9") == 29
    clock.now += 30
    assert again.retry_after("10.0.0.9") == 0
    again.issue_ws_token()  # a call that sweeps
    assert "short" not in again.revoked and "10.0.0.9" not in again.failures
    third = authstate.AuthState(attempts=2, window_seconds=60, durable_dsn=dsn)
    assert len(third.revoked) == 0 and len(third.failures) == 0  # the sweep was recorded too
