"""Raft log compaction and InstallSnapshot (the Raft paper §7, as etcd's raft), attacks and faults
first: a stale leader's snapshot, a snapshot behind the follower's commit index, a matching log
suffix, lost and repeated chunks, a payload that is not the snapshot its header names."""

from __future__ import annotations

import json

import pytest

from actors.tasknet.raft import LEADER, HardState, RaftCore
from tests.actors.tasknet.test_raft_membership import _started


def applied_and_compacted(node: RaftCore) -> None:
    node.take_committed()
    if node.last_applied > node.snap_index():
        node.compact(node.last_applied, {"applied": node.last_applied})


def snapshot_message(index: int, term: int, leader_term: int, voters=("a", "b", "c"), **body) -> dict:
    snap = {"index": index, "term": term, "voters": list(voters), "conf_history": [], "data": {"x": index}}
    blob = json.dumps(snap)
    msg = {
        "type": "install_snapshot",
        "from": "b",
        "to": "a",
        "term": leader_term,
        "leader_id": "b",
        "last_included_index": index,
        "last_included_term": term,
        "offset": 0,
        "chunk": blob,
        "done": True,
    }
    return {**msg, **body}


def follower_with_log(terms: list[int], commit: int, term: int = 1) -> RaftCore:
    hard = HardState(term=term, log=[{"term": t, "data": {"cmd": n}} for n, t in enumerate(terms, 1)])
    node = RaftCore("a", ["a", "b", "c"], hard=hard)
    node.commit_index = commit
    return node


def test_an_install_snapshot_with_a_stale_term_is_refused():
    node = follower_with_log([1, 1, 2], commit=1, term=5)
    reply = node.step(snapshot_message(10, 3, leader_term=3))
    assert reply == {"term": 5, "success": False}
    assert node.snap_index() == 0 and node.last_index() == 3 and node.commit_index == 1
    assert node.take_snapshot() is None
    (answer,) = node.take_messages()
    assert answer["type"] == "install_snapshot_response" and answer["term"] == 5 and not answer["success"]


def test_a_snapshot_that_would_move_the_commit_index_backwards_is_ignored():
    node = follower_with_log([1] * 8, commit=6)
    node.take_committed()
    reply = node.step(snapshot_message(4, 1, leader_term=1))
    assert reply["success"]  # the leader may move on: this node holds it all
    assert node.snap_index() == 0 and node.last_index() == 8
    assert node.commit_index == 6 and node.last_applied == 6 and node.take_snapshot() is None


def test_a_delayed_append_entries_never_moves_the_commit_index_backwards():
    """Failed before: commit = min(leader_commit, last new index) lowered it to 3, and the next
    take_committed applied entries 4..6 a second time."""
    node = follower_with_log([1] * 6, commit=6)
    assert [i for i, _ in node.take_committed()] == [1, 2, 3, 4, 5, 6]
    stale = {"type": "append_entries", "from": "b", "to": "a", "term": 1, "leader_id": "b"}
    entries = [{"term": 1, "data": {"cmd": 2}}, {"term": 1, "data": {"cmd": 3}}]
    node.step({**stale, "prev_log_index": 1, "prev_log_term": 1, "entries": entries, "leader_commit": 9})
    assert node.commit_index == 6 and node.take_committed() == []


def test_the_log_suffix_after_a_snapshot_is_kept_when_it_matches():
    node = follower_with_log([1, 1, 1, 1, 1, 2, 2, 2], commit=2)
    node.step(snapshot_message(5, 1, leader_term=2))
    assert node.snap_index() == 5 and node.last_index() == 8 and node.commit_index == 5
    assert [e["data"]["cmd"] for e in node.hard.log] == [6, 7, 8]
    snap = node.take_snapshot()
    assert snap is not None and snap["data"] == {"x": 5} and node.take_committed() == []


def test_a_log_that_does_not_match_the_snapshot_is_discarded():
    node = follower_with_log([1, 1, 1, 1, 1, 2, 2, 2], commit=2)
    node.step(snapshot_message(6, 3, leader_term=3))  # index 6 holds term 2 here
    assert node.snap_index() == 6 and node.last_index() == 6 and node.hard.log == []
    assert node.term_at(6) == 3 and node.commit_index == 6


@pytest.mark.parametrize(
    "tamper",
    [
        lambda m: {**m, "chunk": m["chunk"][:-3]},  # not JSON
        lambda m: {**m, "last_included_index": 7},  # another snapshot than the one sent
        lambda m: {**m, "chunk": m["chunk"].replace('"voters": ["a", "b", "c"]', '"voters": []')},
    ],
)
def test_a_payload_that_is_not_the_snapshot_its_header_names_is_not_installed(tamper):
    node = follower_with_log([1, 1, 1], commit=1)
    node.step(tamper(snapshot_message(5, 1, leader_term=1)))
    assert node.snap_index() == 0 and node.last_index() == 3 and node.take_snapshot() is None


def test_only_an_applied_index_can_be_compacted():
    node = follower_with_log([1] * 5, commit=3)
    node.take_committed()
    with pytest.raises(ValueError):
        node.compact(4, {})
    node.compact(3, {})
    with pytest.raises(ValueError):
        node.compact(3, {})
    assert node.snap_index() == 3 and node.term_at(3) == 1 and node.entry(3) is None and node.last_index() == 5


def test_a_lagging_follower_gets_the_snapshot_in_chunks_instead_of_entries():
    net = _started(["a", "b", "c"])
    leader = net.leader()
    lagging = next(i for i in net.nodes if i != leader.id)
    net.down.add(lagging)
    for n in range(30):
        leader.propose({"cmd": n})
    net.run(3)
    for i, node in net.nodes.items():
        node.snapshot_chunk = 20
        if i != lagging:
            applied_and_compacted(node)
    assert leader.snap_index() > net.nodes[lagging].last_index()
    seen: list[dict] = []
    original = net.nodes[lagging].step
    net.nodes[lagging].step = lambda msg: seen.append(msg) or original(msg)  # type: ignore[method-assign]
    net.down.clear()
    net.run(10)
    follower = net.nodes[lagging]
    chunks = [m for m in seen if m["type"] == "install_snapshot"]
    assert len(chunks) > 3  # the snapshot (about 90 characters) went in chunks of 20
    assert not [m for m in seen if m["type"] == "append_entries" and m["prev_log_index"] < leader.snap_index()]
    assert follower.snap_index() == leader.snap_index() and follower.take_snapshot()["data"] == {
        "applied": leader.snap_index()
    }
    assert follower.last_index() == leader.last_index() and follower.hard.log == leader.hard.log
    at = leader.propose({"cmd": "after"})
    net.run(3)
    assert follower.commit_index >= at


def test_lost_and_repeated_chunks_still_install_the_snapshot():
    net = _started(["a", "b"], entries=20)
    leader = net.leader()
    other = next(n for i, n in net.nodes.items() if i != leader.id)
    applied_and_compacted(leader)
    newcomer = RaftCore("c", ["a", "b"], hard=HardState(), seed=7)
    leader.snapshot_chunk = 30
    net.nodes["c"] = newcomer
    count = 0
    for _ in range(200):
        for node in (leader, other):
            node.tick()
        for msg in leader.take_messages() + other.take_messages() + newcomer.take_messages():
            count += 1
            if msg["type"].startswith("install_snapshot") and count % 3 == 0:
                continue  # lost
            target = net.nodes[msg["to"]]
            target.step(msg)
            if msg["type"] == "install_snapshot" and count % 5 == 0:
                target.step(msg)  # repeated
        if newcomer.snap_index():
            break
        if "c" not in leader._learners:
            leader._caught_up("c")  # the leader replicates to it as a learner
    assert newcomer.snap_index() == leader.snap_index() and newcomer.commit_index >= leader.snap_index()


def test_a_learner_catches_up_from_a_snapshot_and_then_counts():
    net = _started(["a", "b", "c"], ["d"], entries=150)
    for i in "abc":
        applied_and_compacted(net.nodes[i])
    leader = net.leader()
    index = net.propose_change("add", "d")
    d = net.nodes["d"]
    assert d.snap_index() == leader.snap_index() > 0  # it never received the compacted entries
    net.run(5)
    assert leader.commit_index >= index and d.voters() == ["a", "b", "c", "d"]
    net.down.add(next(i for i in "abc" if i != leader.id))
    at = leader.propose({"cmd": "after"})
    net.run(5)
    assert leader.commit_index >= at and d.commit_index >= at and leader.role == LEADER


def test_the_snapshot_keeps_the_configuration_in_force_and_its_history():
    net = _started(["a", "b", "c", "d"])
    removed = next(i for i in net.nodes if i != net.leader().id)
    index = net.propose_change("remove", removed)
    net.run(5)
    leader = net.leader()
    applied_and_compacted(leader)
    snap = leader.hard.snapshot
    assert snap is not None and snap["index"] >= index
    assert snap["voters"] == sorted(set("abcd") - {removed}) == leader.voters()
    assert snap["conf_history"] == [
        {"index": index, "voters": snap["voters"], "proposal_id": f"remove-{removed}"},
    ]
    restarted = RaftCore(leader.id, ["a", "b", "c", "d"], hard=leader.hard)
    assert restarted.voters() == leader.voters() and restarted.commit_index == snap["index"]


def test_a_snapshot_larger_than_the_cap_is_dropped_not_buffered(monkeypatch):
    from actors.tasknet import raft as raft_module

    monkeypatch.setattr(raft_module, "MAX_SNAPSHOT", 100)
    node = follower_with_log([1, 1, 1], commit=1)
    first = snapshot_message(5, 1, leader_term=1, chunk="x" * 60, done=False)
    node.step(first)
    node.take_messages()
    node.step({**first, "offset": 60})  # 120 characters: over the cap
    (answer,) = node.take_messages()
    assert not answer["success"] and answer["offset"] == 0 and node._incoming is None
    assert node.snap_index() == 0 and node.last_index() == 3
