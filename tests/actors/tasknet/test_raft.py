"""Raft under randomized fault schedules: crash, restart, partition, loss, duplication, reordering.

After every step the four safety properties of the Raft paper are checked:
election safety, log matching, leader completeness and state-machine safety. With `snapshot_every`
each node compacts its log once that many entries were applied past its snapshot, so followers
also catch up by InstallSnapshot; each state machine is a hash chain over what it applied (a
snapshot carries the hash), and every node must reach the same hash at each index.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random

import pytest

from actors.tasknet.raft import LEADER, HardState, RaftCore

IDS = ["a", "b", "c", "d", "e"]


def chain(digest: str, index: int, data: dict) -> str:
    return hashlib.sha256(json.dumps([digest, index, data], sort_keys=True).encode()).hexdigest()


class Cluster:
    def __init__(self, seed: int, size: int, snapshot_every: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.ids = IDS[:size]
        self.snapshot_every = snapshot_every
        self.disk = {i: HardState() for i in self.ids}
        self.nodes = {i: self.make(i, self.disk[i], seed * 31 + n) for n, i in enumerate(self.ids)}
        self.up = set(self.ids)
        self.cut: set[frozenset[str]] = set()
        self.wire: list[dict] = []
        self.leaders: dict[int, str] = {}
        self.committed: dict[int, dict] = {}
        self.applied = {i: [] for i in self.ids}
        self.app = {i: (0, "") for i in self.ids}  # each state machine: (applied index, hash chain)
        self.digests: dict[int, str] = {}  # the first hash seen at each index
        self.snapshots_installed = 0

    def make(self, i: str, hard: HardState, seed: int) -> RaftCore:
        return RaftCore(i, self.ids, hard=hard, seed=seed, snapshot_chunk=40)

    def _reached(self, i: str, index: int, digest: str) -> None:
        self.app[i] = (index, digest)
        assert self.digests.setdefault(index, digest) == digest, "state machines diverged"

    def flush(self, node: RaftCore) -> None:
        self.wire.extend(node.take_messages())
        snap = node.take_snapshot()
        if snap is not None:
            assert snap["index"] >= self.app[node.id][0], "a snapshot moved a state machine backwards"
            self.snapshots_installed += 1
            self._reached(node.id, snap["index"], snap["data"]["digest"])
        for index, data in node.take_committed():
            self.applied[node.id].append((index, data))
            at, digest = self.app[node.id]
            assert at == index - 1, "an entry applied out of order"
            self._reached(node.id, index, chain(digest, index, data))
        if self.snapshot_every and node.last_applied - node.snap_index() >= self.snapshot_every:
            node.compact(node.last_applied, {"digest": self.app[node.id][1]})
        self.disk[node.id] = copy.deepcopy(node.hard)

    def crash(self, i: str) -> None:
        self.up.discard(i)
        self.wire = [m for m in self.wire if m["to"] != i]

    def restart(self, i: str) -> None:
        self.nodes[i] = self.make(i, copy.deepcopy(self.disk[i]), self.rng.randrange(1 << 30))
        self.applied[i] = []
        snap = self.nodes[i].take_snapshot()  # restart = load the snapshot, then replay what follows
        self.app[i] = (snap["index"], snap["data"]["digest"]) if snap else (0, "")
        self.up.add(i)

    def step(self) -> None:
        r = self.rng.random()
        if r < 0.45 and self.wire:
            msg = self.wire.pop(self.rng.randrange(len(self.wire)))  # reordering
            if self.rng.random() < 0.1:
                return  # loss
            if self.rng.random() < 0.05:
                self.wire.append(copy.deepcopy(msg))  # duplication
            if msg["to"] in self.up and frozenset((msg["from"], msg["to"])) not in self.cut:
                node = self.nodes[msg["to"]]
                node.step(msg)
                self.flush(node)
        elif r < 0.8:
            i = self.rng.choice(sorted(self.up))
            self.nodes[i].tick()
            self.flush(self.nodes[i])
        elif r < 0.88:
            for i in sorted(self.up):
                if self.nodes[i].role == LEADER:
                    self.nodes[i].propose({"cmd": self.rng.randrange(1000)})
                    self.flush(self.nodes[i])
        elif r < 0.93:
            if len(self.up) > 1 and self.rng.random() < 0.5:
                self.crash(self.rng.choice(sorted(self.up)))
            elif len(self.up) < len(self.ids):
                self.restart(self.rng.choice(sorted(set(self.ids) - self.up)))
        elif r < 0.97:
            a, b = self.rng.sample(self.ids, 2)
            self.cut.add(frozenset((a, b)))
        else:
            self.cut.clear()

    def check(self) -> None:
        nodes = [self.nodes[i] for i in sorted(self.up)]
        for node in nodes:
            if node.role == LEADER:
                owner = self.leaders.setdefault(node.term, node.id)
                assert owner == node.id, f"two leaders in term {node.term}"
                for index, entry in self.committed.items():
                    if index > node.snap_index():  # below it: the snapshot's hash is checked
                        assert node.term_at(index) == entry["term"], "leader lacks a committed entry"
            assert node.commit_index >= node.snap_index() and node.last_applied >= node.snap_index()
            for index in range(node.snap_index() + 1, node.commit_index + 1):
                entry = node.entry(index)
                known = self.committed.setdefault(index, entry)
                assert known == entry, "two entries committed at one index"
        for x in nodes:
            for y in nodes:
                low = max(x.snap_index(), y.snap_index())
                upto = min(x.last_index(), y.last_index())
                for index in range(upto, low, -1):
                    if x.term_at(index) == y.term_at(index):
                        same = x.entries(low + 1, index + 1) == y.entries(low + 1, index + 1)
                        assert same, "log matching violated"
                        break
        for seq in self.applied.values():
            for index, data in seq:
                if index in self.committed:
                    assert self.committed[index]["data"] == data, "state machines applied different commands"


@pytest.mark.parametrize("seed", range(12))
def test_safety_holds_under_a_random_fault_schedule(seed):
    cluster = Cluster(seed, 3 + seed % 3)
    for _ in range(2500):
        cluster.step()
        cluster.check()


@pytest.mark.parametrize("seed", range(12))
def test_safety_holds_under_a_random_fault_schedule_with_constant_compaction(seed):
    cluster = Cluster(seed, 3 + seed % 3, snapshot_every=5)
    for _ in range(2500):
        cluster.step()
        cluster.check()
    assert any(n.snap_index() for n in cluster.nodes.values())  # compaction did happen


def test_a_quiet_cluster_elects_one_leader_and_commits_in_order():
    cluster = Cluster(99, 3)
    for _ in range(400):
        for i in cluster.ids:
            cluster.nodes[i].tick()
            cluster.flush(cluster.nodes[i])
        while cluster.wire:
            msg = cluster.wire.pop(0)
            cluster.nodes[msg["to"]].step(msg)
            cluster.flush(cluster.nodes[msg["to"]])
        leaders = [n for n in cluster.nodes.values() if n.role == LEADER]
        if leaders and len(cluster.committed) < 5:
            leaders[0].propose({"cmd": len(cluster.committed)})
            cluster.flush(leaders[0])
        cluster.check()
    leaders = [n for n in cluster.nodes.values() if n.role == LEADER]
    assert len(leaders) == 1
    for i in cluster.ids:
        cmds = [d["cmd"] for _, d in cluster.applied[i] if "cmd" in d]
        assert cmds == sorted(cmds) and len(cmds) >= 4


def test_a_stale_term_is_refused():
    node = RaftCore("a", ["a", "b", "c"], hard=HardState(term=5))
    reply = node.step(
        {
            "type": "request_vote",
            "from": "b",
            "to": "a",
            "term": 3,
            "candidate_id": "b",
            "last_log_index": 9,
            "last_log_term": 4,
        }
    )
    assert reply == {"term": 5, "vote_granted": False}
    reply = node.step(
        {
            "type": "append_entries",
            "from": "b",
            "to": "a",
            "term": 4,
            "leader_id": "b",
            "prev_log_index": 0,
            "prev_log_term": 0,
            "entries": [],
            "leader_commit": 0,
        }
    )
    assert reply == {"term": 5, "success": False}


def _quiet(cluster: Cluster, rounds: int, isolated: str | None = None) -> None:
    """Tick everyone and deliver every message, except those to or from `isolated`."""
    for _ in range(rounds):
        for i in cluster.ids:
            cluster.nodes[i].tick()
            cluster.flush(cluster.nodes[i])
        while cluster.wire:
            msg = cluster.wire.pop(0)
            if isolated not in (msg["to"], msg["from"]):
                cluster.nodes[msg["to"]].step(msg)
                cluster.flush(cluster.nodes[msg["to"]])
        cluster.check()


def _leader(cluster: Cluster) -> RaftCore:
    (leader,) = [n for n in cluster.nodes.values() if n.role == LEADER]
    return leader


def test_pre_vote_an_isolated_follower_does_not_inflate_its_term_nor_depose_the_leader():
    cluster = Cluster(7, 3)
    _quiet(cluster, 60)
    leader = _leader(cluster)
    term = leader.term
    follower = next(i for i in cluster.ids if i != leader.id)
    _quiet(cluster, 200, isolated=follower)  # ten election timeouts alone
    assert cluster.nodes[follower].term == term
    _quiet(cluster, 20)
    assert _leader(cluster).id == leader.id and leader.term == term


def test_check_quorum_a_leader_cut_off_from_the_majority_steps_down():
    cluster = Cluster(8, 3)
    _quiet(cluster, 60)
    leader = _leader(cluster)
    _quiet(cluster, 60, isolated=leader.id)
    assert leader.role != LEADER
    others = [cluster.nodes[i] for i in cluster.ids if i != leader.id]
    assert sum(1 for n in others if n.role == LEADER) == 1
