"""The node's loop pacing: Raft's next deadline (`RaftCore.ticks_until_due`), the wall-clock ticks
(`RaftClock`), anti-entropy's backoff (`Backoff`) and the log digest anti-entropy compares."""

from __future__ import annotations

import copy
import random

import pytest

from actors.tasknet.pacing import Backoff, RaftClock
from actors.tasknet.raft import FOLLOWER, LEADER, PRE_CANDIDATE, RaftCore
from tests.actors.tasknet.netsim import make_network
from tests.actors.tasknet.test_raft import Cluster

TICK = 0.05


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def acts(node: RaftCore) -> bool:
    """Tick `node` once; whether the tick did something (sent messages or changed its role)."""
    role = node.role
    node.tick()
    return bool(node.take_messages()) or node.role != role


def test_ticks_until_due_names_the_first_tick_that_acts() -> None:
    """At random points of faulty runs (leaders, followers, candidates, check-quorum step-downs), the
    ticks before the one `ticks_until_due` names do nothing, and that one acts: sleeping until it
    loses no heartbeat, no check-quorum and no election timeout."""
    checked = {FOLLOWER: 0, LEADER: 0}
    for seed in range(12):
        cluster = Cluster(seed, 3 + seed % 3)
        rng = random.Random(seed)
        for _ in range(1500):
            cluster.step()
            if rng.random() < 0.05:
                node = copy.deepcopy(cluster.nodes[rng.choice(cluster.ids)])
                node.take_messages()
                role = node.role
                due = node.ticks_until_due()
                assert due is not None and due >= 1, "every voter has a next deadline"
                for _ in range(due - 1):
                    assert not acts(node), "a tick before the deadline acted"
                assert acts(node), "the tick at the deadline did nothing"
                checked[LEADER if role == LEADER else FOLLOWER] += 1
    assert all(checked.values()), checked


def test_a_server_outside_the_configuration_has_no_deadline() -> None:
    learner = RaftCore("d", ["a", "b", "c"], seed=1)
    assert learner.ticks_until_due() is None


def test_the_clock_ticks_what_went_by_before_a_message_so_a_reset_counts_from_now() -> None:
    """A follower sleeping to its election deadline gets a heartbeat midway: the ticks until then are
    applied first, the heartbeat resets the timer, and the new deadline is a full timeout from now."""
    time = FakeTime()
    clock = RaftClock(TICK, now=time)
    node = RaftCore("a", ["a", "b", "c"], seed=3)
    clock.catch_up(node)  # anchors the clock
    timeout = node.ticks_until_due()
    assert timeout is not None and timeout >= node.election_ticks
    time.now += (timeout - 2) * TICK
    assert clock.catch_up(node) == timeout - 2
    heartbeat = {
        "type": "append_entries",
        "from": "b",
        "to": "a",
        "term": 1,
        "leader_id": "b",
        "prev_log_index": 0,
        "prev_log_term": 0,
        "entries": [],
        "leader_commit": 0,
    }
    node.step(heartbeat)  # type: ignore[arg-type]
    assert node.role == FOLLOWER and node.leader_id == "b"
    assert clock.delay(node) == pytest.approx(node.ticks_until_due() * TICK)
    assert node.ticks_until_due() >= node.election_ticks, "the heartbeat restarted the election timer"


def test_a_late_clock_acts_once_and_drops_the_ticks_it_missed() -> None:
    """A loop that wakes far past its deadline (a stalled event loop) campaigns once, like a late
    fixed ticker, and its next deadline counts from now: no burst of ticks."""
    time = FakeTime()
    clock = RaftClock(TICK, now=time)
    node = RaftCore("a", ["a", "b", "c"], seed=5)
    clock.catch_up(node)
    due = node.ticks_until_due()
    assert due is not None
    time.now += (due + 50) * TICK
    assert clock.catch_up(node) == due
    assert node.role == PRE_CANDIDATE
    assert clock.delay(node) == pytest.approx(node.ticks_until_due() * TICK)


def test_backoff_doubles_while_quiet_up_to_the_cap_and_a_change_resets_it() -> None:
    backoff = Backoff(0.5, 4.0)
    seen = []
    for _ in range(6):
        seen.append(backoff.interval)
        backoff.quiet()
    assert seen == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert backoff.backed_off and backoff.resets == 0
    backoff.reset()
    assert backoff.interval == 0.5 and backoff.resets == 1
    backoff.reset()  # already at base: not counted again
    assert backoff.resets == 1


@pytest.mark.parametrize(("base", "cap"), [(0.0, 1.0), (2.0, 1.0)])
def test_backoff_refuses_a_cap_below_its_base(base: float, cap: float) -> None:
    with pytest.raises(ValueError, match="backoff"):
        Backoff(base, cap)


def test_log_digests_are_equal_for_the_same_events_in_any_order_and_differ_when_one_is_missing() -> None:
    a, b, c = make_network(3)
    assert a.log.digest() == b.log.digest() == c.log.digest()
    events = [a.submit("task_create", {"title": f"t{i}", "reward": 1})[0] for i in range(6)]
    assert a.log.digest() != b.log.digest()
    b.receive(list(reversed(events)))  # out of order: the pending buffer fills the gaps
    assert not b.log.pending
    assert b.log.digest() == a.log.digest()
    late = c.submit("task_create", {"title": "from c", "reward": 1})[0]
    a.receive([late])
    assert b.log.digest() != a.log.digest(), "b lacks c's event"
    version = b.log.version
    b.receive([late])
    assert b.log.version > version
    assert b.log.digest() == a.log.digest()
    b.receive([*events, late])  # duplicates change nothing
    assert b.log.version == version + 1 and b.log.digest() == a.log.digest()
