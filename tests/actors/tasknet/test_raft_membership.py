"""Raft membership change, one server at a time (Ongaro's thesis §4.1), over a deterministic network.

A configuration entry carries the whole new voter set; each server uses the latest one in its log
as soon as it is appended; the leader refuses a second change while one is uncommitted, adds a
server only once it has caught up as a learner, refuses a change that leaves the live servers
without a majority of the new set, and steps down once the entry that removes it commits.
"""

from __future__ import annotations

import pytest

from actors.tasknet.raft import LEADER, ChangeRefused, HardState, RaftCore
from tests.actors.tasknet.test_raft import IDS, Cluster


class Net:
    """Every node ticks each round; every message is delivered in order, except to or from `down`."""

    def __init__(self, voters: list[str], extra: list[str] = ()) -> None:
        self.nodes = {i: RaftCore(i, voters, hard=HardState(), seed=n) for n, i in enumerate([*voters, *extra])}
        self.down: set[str] = set()

    def run(self, rounds: int) -> None:
        for _ in range(rounds):
            for i, node in self.nodes.items():
                if i not in self.down:
                    node.tick()
            self.deliver()

    def deliver(self) -> None:
        moved = True
        while moved:
            moved = False
            for node in list(self.nodes.values()):
                for msg in node.take_messages():
                    moved = True
                    if msg["to"] in self.nodes and not {msg["to"], msg["from"]} & self.down:
                        self.nodes[msg["to"]].step(msg)

    def leader(self) -> RaftCore:
        (leader,) = [n for i, n in self.nodes.items() if n.role == LEADER and i not in self.down]
        return leader

    def propose_change(self, op: str, node: str, rounds: int = 40) -> int:
        """Ask the leader for the change until the learner caught up; the index of the entry."""
        for _ in range(rounds):
            try:
                return self.leader().propose_change(op, node, {"proposal_id": f"{op}-{node}"})
            except ChangeRefused as exc:
                if not exc.retry:
                    raise
            self.run(1)
        raise AssertionError("the change never got appended")


def _started(voters: list[str], extra: list[str] = (), entries: int = 0) -> Net:
    net = Net(voters, list(extra))
    net.run(60)
    for n in range(entries):
        net.leader().propose({"cmd": n})
    net.run(5)
    return net


def test_a_new_server_catches_up_as_a_learner_before_it_counts():
    net = _started(["a", "b", "c"], ["d"], entries=150)  # more than one append batch behind
    leader = net.leader()
    assert net.nodes["d"].last_index() < leader.last_index()
    with pytest.raises(ChangeRefused, match="catching up") as refused:
        leader.propose_change("add", "d", {"proposal_id": "p"})
    assert refused.value.retry and leader.voters() == ["a", "b", "c"]
    index = net.propose_change("add", "d")
    assert net.nodes["d"].last_index() >= leader.commit_index  # caught up before the entry went in
    assert leader.voters() == ["a", "b", "c", "d"]  # in force as soon as appended, before it commits
    net.run(5)
    assert leader.commit_index >= index and all(n.voters() == ["a", "b", "c", "d"] for n in net.nodes.values())
    # d counts now: with one of the old three down, a, c/b and d are 3 of 4 and still commit
    net.down.add(next(i for i in "abc" if i != leader.id))
    at = leader.propose({"cmd": "after"})
    net.run(5)
    assert leader.commit_index >= at


def test_a_learner_never_campaigns():
    net = _started(["a", "b", "c"], ["d"])
    net.down.update({"a", "b", "c"})
    net.run(200)
    assert net.nodes["d"].term == 0 and net.nodes["d"].role != LEADER


def test_a_second_change_is_refused_while_one_is_uncommitted():
    net = _started(["a", "b", "c", "d", "e"])
    leader = net.leader()
    others = [i for i in net.nodes if i != leader.id]
    net.down.update(others[:3])  # the change cannot commit: two of five
    index = leader.propose_change("remove", others[0], {"proposal_id": "p1"})
    assert leader.commit_index < index
    with pytest.raises(ChangeRefused, match="uncommitted") as refused:
        leader.propose_change("remove", others[1], {"proposal_id": "p2"})
    assert not refused.value.retry
    net.down.clear()
    net.run(5)
    assert net.leader().commit_index >= index
    assert net.propose_change("remove", others[1]) > index
    net.run(5)
    assert net.leader().voters() == sorted(set(net.nodes) - {others[0], others[1]})


def test_a_removed_leader_steps_down_after_committing_and_stays_quiet():
    net = _started(["a", "b", "c"])
    old = net.leader()
    index = old.propose_change("remove", old.id, {"proposal_id": "p"})
    assert old.role == LEADER and old.voters() == sorted({"a", "b", "c"} - {old.id})
    net.deliver()
    assert old.commit_index >= index and old.role != LEADER
    net.run(80)
    new = net.leader()
    assert new.id != old.id and new.voters() == sorted({"a", "b", "c"} - {old.id})
    term = old.term
    net.down = {i for i in net.nodes if i != old.id}  # cut off: a removed server does not campaign
    net.run(200)
    assert old.term == term


def test_a_change_that_would_leave_the_live_servers_without_a_majority_is_refused():
    net = _started(["a", "b", "c", "d", "e"])
    leader = net.leader()
    others = [i for i in net.nodes if i != leader.id]
    live, dead = others[0], others[2:]
    net.down.update(dead)
    net.run(30)  # the leader hears from itself and two others only; three of five still commit
    assert net.leader() is leader
    with pytest.raises(ChangeRefused, match="live"):
        leader.propose_change("remove", live, {"proposal_id": "p"})  # 2 live of the 4 left
    assert leader.voters() == sorted(net.nodes)
    index = leader.propose_change("remove", dead[0], {"proposal_id": "p"})  # 3 live of the 4 left
    net.run(5)
    assert leader.commit_index >= index


def test_a_change_before_the_leader_committed_in_its_term_or_on_a_follower_is_refused():
    net = _started(["a", "b", "c"])
    leader = net.leader()
    follower = next(n for i, n in net.nodes.items() if i != leader.id)
    with pytest.raises(ChangeRefused, match="leader"):
        follower.propose_change("remove", leader.id, {"proposal_id": "p"})
    net.down.add(leader.id)
    for _ in range(200):
        net.run(1)
        fresh = [n for i, n in net.nodes.items() if n.role == LEADER and i not in net.down]
        if fresh:
            break
    (fresh_leader,) = fresh
    if fresh_leader.commit_index < fresh_leader.last_index():  # its no-op is not committed yet
        with pytest.raises(ChangeRefused, match="term"):
            fresh_leader.propose_change("remove", leader.id, {"proposal_id": "p"})
    net.run(5)
    assert fresh_leader.propose_change("remove", leader.id, {"proposal_id": "p"}) > 0


def test_a_configuration_entry_that_gets_overwritten_is_no_longer_in_force():
    net = _started(["a", "b", "c"])
    leader = net.leader()
    net.down = {i for i in net.nodes if i != leader.id}
    leader.propose_change("remove", leader.id, {"proposal_id": "p"})  # never reaches anyone
    assert leader.voters() != ["a", "b", "c"]
    net.down = {leader.id}
    net.run(80)
    net.down.clear()
    net.run(20)
    assert leader.voters() == ["a", "b", "c"] and leader.role != LEADER


class ChangingCluster(Cluster):
    """test_raft's fault schedule over a..e where e starts as a non-member, plus random changes."""

    def __init__(self, seed: int, snapshot_every: int | None = None) -> None:
        self.base = IDS[:4]
        super().__init__(seed, 5, snapshot_every)

    def make(self, i: str, hard: HardState, seed: int) -> RaftCore:
        return RaftCore(i, self.base, hard=hard, seed=seed, snapshot_chunk=40)

    def step(self) -> None:
        if self.rng.random() < 0.03:
            for i in sorted(self.up):
                node = self.nodes[i]
                if node.role == LEADER:
                    target = self.rng.choice(self.ids)
                    op = "remove" if target in node.voters() else "add"
                    try:
                        node.propose_change(op, target, {"proposal_id": "p"})
                    except ChangeRefused:
                        pass
                    self.flush(node)
            return
        super().step()


@pytest.mark.parametrize("snapshot_every", [None, 5])
@pytest.mark.parametrize("seed", range(8))
def test_safety_holds_while_the_membership_changes(seed, snapshot_every):
    """With `snapshot_every` 5 every node compacts constantly: learners and lagging or restarted
    followers catch up by InstallSnapshot (in chunks of 40 characters) during the faults."""
    cluster = ChangingCluster(seed, snapshot_every)
    changes = set()
    for _ in range(3000):
        cluster.step()
        cluster.check()
        changes.update(i for i, e in cluster.committed.items() if "conf" in e["data"])
        for node in cluster.nodes.values():  # and those compacted before a check saw them
            changes.update(c["index"] for c in (node.hard.snapshot or {"conf_history": []})["conf_history"])
    assert changes  # the schedule did change the membership
    if snapshot_every:
        assert any(n.snap_index() for n in cluster.nodes.values())  # compaction did happen


def test_a_leader_that_removes_itself_does_not_count_itself_for_that_entry():
    net = _started(["a", "b", "c"])
    leader = net.leader()
    b = next(i for i in net.nodes if i != leader.id)
    net.down.add(b)
    index = leader.propose_change("remove", leader.id, {"proposal_id": "p"})
    net.deliver()
    assert leader.commit_index < index and leader.role == LEADER  # the third alone is not a majority of two
    net.down.clear()
    net.run(2)
    assert leader.commit_index >= index and leader.role != LEADER
