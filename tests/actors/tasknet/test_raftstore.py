"""raft.log and its snapshots on disk: restart = newest snapshot that verifies + the log after it.

A node that compacted constantly restarts into the state of one that never compacted; a torn or
corrupted newest snapshot is never loaded (the previous one and the log rebuild the same state); a
snapshot installed from the leader survives a restart and replaces the log; a validator keeps
Raft entries until they are ratified (their data decides what later entries may do)."""

from __future__ import annotations

import json
import shutil

import pytest

from actors.tasknet.node import NodeCore
from actors.tasknet.raft import LEADER, RaftCore
from actors.tasknet.raftstore import RaftStorageError, RaftStore
from tests.actors.tasknet.netsim import make_network
from tests.actors.tasknet.test_raft import chain


class Solo:
    """A single-voter Raft over a RaftStore, applying into a hash chain (the state machine)."""

    def __init__(self, folder, snapshot_every: int | None) -> None:
        folder.mkdir(exist_ok=True)
        self.folder, self.snapshot_every = folder, snapshot_every
        self.store = RaftStore(folder)
        self.raft = RaftCore("a", ["a"], hard=self.store.load(), seed=1)
        snap = self.raft.take_snapshot()
        self.state = (snap["index"], snap["data"]["digest"]) if snap else (0, "")
        while self.raft.role != LEADER:
            self.raft.tick()
        self.flush()

    def flush(self) -> None:
        self.store.persist(self.raft)
        for index, data in self.raft.take_committed():
            assert index == self.state[0] + 1
            self.state = (index, chain(self.state[1], index, data))
        if self.snapshot_every and self.raft.last_applied - self.raft.snap_index() >= self.snapshot_every:
            self.store.compact(self.raft, self.raft.last_applied, {"digest": self.state[1]})

    def propose(self, n: int) -> None:
        for i in range(n):
            self.raft.propose({"cmd": i})
            self.flush()

    def view(self) -> tuple:
        r = self.raft
        last = r.last_index()
        return r.term, r.hard.voted_for, last, r.term_at(last), r.commit_index, r.voters(), self.state

    def snapshots(self) -> list[str]:
        return sorted(p.name for p in self.folder.glob("raft-snap-*.json"))


def test_a_restarted_node_after_compaction_has_the_state_of_one_that_never_compacted(tmp_path):
    compacting, plain = Solo(tmp_path / "c", 5), Solo(tmp_path / "p", None)
    for node in (compacting, plain):
        node.propose(37)
    assert compacting.raft.snap_index() >= 35 and plain.raft.snap_index() == 0
    assert len(compacting.snapshots()) == 2  # the newest and the previous one (the fallback)
    assert (tmp_path / "c" / "raft.log").stat().st_size < (tmp_path / "p" / "raft.log").stat().st_size / 3
    compacting.store.close()
    plain.store.close()
    again, plain_again = Solo(tmp_path / "c", 5), Solo(tmp_path / "p", None)
    assert again.raft.snap_index() >= 35
    assert again.view() == plain_again.view()
    again.propose(3)
    plain_again.propose(3)
    assert again.view() == plain_again.view()


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # torn: the crash hit while the file was written
        lambda raw: raw.replace(b'"term":', b'"term" :', 1),  # the checksum no longer matches
        lambda raw: b"",
    ],
)
def test_a_torn_newest_snapshot_is_never_loaded_and_the_previous_one_rebuilds_the_state(tmp_path, damage):
    node = Solo(tmp_path / "c", 5)
    node.propose(23)
    node.store.close()
    shutil.copytree(tmp_path / "c", tmp_path / "intact")
    newest = sorted((tmp_path / "c").glob("raft-snap-*.json"))[-1]
    newest.write_bytes(damage(newest.read_bytes()))
    again, intact = Solo(tmp_path / "c", 5), Solo(tmp_path / "intact", 5)
    assert again.store.snapshots_refused == 1 and intact.store.snapshots_refused == 0
    assert again.view() == intact.view() and again.state[0] > node.raft.snap_index()


def test_a_crash_while_writing_a_snapshot_leaves_the_previous_one(tmp_path, monkeypatch):
    node = Solo(tmp_path / "c", 5)
    node.propose(12)
    before = node.snapshots()
    from actors.tasknet import wal

    def crash(path, data):  # the temporary file half written, then the process dies
        path.with_name(path.name + ".tmp").write_bytes(data[: len(data) // 2])
        raise SystemExit("crash")

    monkeypatch.setattr(wal, "write_atomic", crash)
    with pytest.raises(SystemExit):
        node.propose(10)
    monkeypatch.undo()
    node.store.close()
    assert node.snapshots() == before
    again = Solo(tmp_path / "c", 5)
    assert again.store.snapshots_refused == 0
    assert again.state[0] >= 15 and again.raft.last_index() >= again.state[0]


def test_without_any_snapshot_that_verifies_a_log_that_starts_late_is_refused(tmp_path):
    node = Solo(tmp_path / "c", 5)
    node.propose(23)
    node.store.close()
    for path in (tmp_path / "c").glob("raft-snap-*.json"):
        path.write_bytes(b"garbage\n")
    with pytest.raises(RaftStorageError):
        RaftStore(tmp_path / "c").load()


def test_a_snapshot_installed_from_the_leader_survives_a_restart_and_replaces_the_log(tmp_path):
    node = make_network(1, data_dirs=[tmp_path / "n1"])[0]
    raft = node.ensure_raft()
    raft.hard.log.extend([{"term": 1, "data": {"a": n}} for n in range(4)])
    raft.dirty = True
    node.persist_raft()
    snap = {"conf_history": [], "data": {"ratified_index": 0}, "index": 9, "term": 2, "voters": [node.node_id]}
    blob = json.dumps(snap)
    raft.step(
        {
            "type": "install_snapshot",
            "from": "x",
            "to": node.node_id,
            "term": 2,
            "leader_id": "x",
            "last_included_index": 9,
            "last_included_term": 2,
            "offset": 0,
            "chunk": blob,
            "done": True,
        }
    )
    node.persist_raft()
    node.close()
    again = NodeCore("n1", tmp_path / "n1").ensure_raft()
    assert again.snap_index() == 9 and again.hard.log == [] and again.term == 2 and again.commit_index == 9
    assert [p.name for p in (tmp_path / "n1").glob("raft-snap-*.json")] == [f"raft-snap-{9:020d}.json"]


def compacting_leader(tmp_path) -> tuple[NodeCore, RaftCore]:
    """A one-validator network's node (files under tmp_path/n1) that snapshots every 5 entries, and its
    Raft, leader."""
    node = make_network(1, data_dirs=[tmp_path / "n1"])[0]
    node.raft_snapshot_entries = 5
    raft = node.ensure_raft(seed=1)
    while raft.role != LEADER:
        raft.tick()
    return node, raft


def test_a_validator_compacts_only_entries_already_ratified(tmp_path):
    node, raft = compacting_leader(tmp_path)
    for n in range(8):
        raft.propose({"cmd": n})
    pending = raft.propose({"proposal_id": "not-ratified-yet"})
    for n in range(12):
        raft.propose({"cmd": n})
    node.persist_raft()
    node.apply_committed()
    assert raft.snap_index() == pending - 1  # everything before the entry that awaits its ratification
    assert raft.entry(pending)["data"]["proposal_id"] == "not-ratified-yet"
    assert node.stats["raft_snapshots"] == 1
    node.close()
    again = NodeCore("n1", tmp_path / "n1").ensure_raft()
    assert again.snap_index() == pending - 1 and again.last_index() == raft.last_index()


def test_a_validator_whose_raft_files_have_a_hole_runs_no_raft_rather_than_a_wrong_one(tmp_path):
    node, raft = compacting_leader(tmp_path)
    for _ in range(2):  # two snapshots: raft.log now starts at the first one
        for n in range(12):
            raft.propose({"cmd": n})
        node.persist_raft()
        node.apply_committed()
    node.close()
    for path in (tmp_path / "n1").glob("raft-snap-*.json"):
        path.write_bytes(b"garbage\n")
    again = NodeCore("n1", tmp_path / "n1")
    assert again.ensure_raft() is None and "no snapshot" in (again.raft_error or "")
