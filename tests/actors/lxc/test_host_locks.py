"""Per-host container locks and VMID reservations (the HostLocks actor)."""

from __future__ import annotations

import time

import pytest

from actors.lxc import HostLocks
from rayfleet import state


def test_all_or_nothing_acquire_and_owner_release():
    locks = HostLocks()
    assert locks.try_acquire(["ct:100", "ct:101"], "a", 60)
    assert not locks.try_acquire(["ct:101", "ct:102"], "b", 60)
    assert locks.holders() == {"ct:100": "a", "ct:101": "a"}
    locks.release(["ct:100", "ct:101"], "b")
    assert locks.holders() == {"ct:100": "a", "ct:101": "a"}
    locks.release(["ct:100", "ct:101"], "a")
    assert locks.try_acquire(["ct:101", "ct:102"], "b", 60)
    assert locks.holders() == {"ct:101": "b", "ct:102": "b"}


def test_same_owner_may_reacquire():
    locks = HostLocks()
    assert locks.try_acquire(["ct:100"], "a", 60)
    assert locks.try_acquire(["ct:100"], "a", 60)


def test_leases_lapse_after_their_ttl(monkeypatch: pytest.MonkeyPatch):
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    locks = HostLocks()
    assert locks.try_acquire(["ct:100"], "crashed-replica", 5)
    assert not locks.try_acquire(["ct:100"], "b", 5)
    now[0] += 5.0
    assert locks.try_acquire(["ct:100"], "b", 5)
    assert locks.holders() == {"ct:100": "b"}


def test_vmid_reservations(monkeypatch: pytest.MonkeyPatch):
    now = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    locks = HostLocks()
    assert locks.reserve_vmid(100, "a", 10)
    assert not locks.reserve_vmid(100, "b", 10)
    assert locks.reserve_vmid(101, "b", 10)
    assert locks.reserved() == [100, 101]
    locks.release_vmid(100, "b")
    assert locks.reserved() == [100, 101]
    locks.release_vmid(100, "a")
    assert locks.reserved() == [101]
    now[0] += 10
    assert locks.reserved() == []


async def test_through_the_state_handle_replicas_share_one_table():
    with state.local_state():
        state.reset_local_state()
        one = state.actor(HostLocks, "lxc-locks-test-az")
        two = state.actor(HostLocks, "lxc-locks-test-az")
        assert await one.try_acquire.remote(["ct:200"], "replica-1", 60)
        assert not await two.try_acquire.remote(["ct:200"], "replica-2", 60)
        await one.release.remote(["ct:200"], "replica-1")
        assert await two.try_acquire.remote(["ct:200"], "replica-2", 60)
        state.reset_local_state()
