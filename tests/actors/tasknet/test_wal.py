"""The event log and the Raft state are fsynced append-only record files: a torn last record
(a crash in the middle of an append) is detected and dropped at start, and what follows it
is written on a clean boundary, so no acknowledged event or Raft vote is lost."""

from __future__ import annotations

import os

from actors.tasknet.node import NodeCore
from actors.tasknet.wal import RecordLog
from tests.actors.tasknet.netsim import comparable, make_network, sync


def test_a_torn_last_record_is_dropped_and_the_file_truncated(tmp_path):
    path = tmp_path / "r.log"
    log = RecordLog(path)
    log.append([{"n": 1}, {"n": 2}])
    log.close()
    good = path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b'0badc0de {"n": 3, "half')  # the crash came mid-append
    again = RecordLog(path)
    assert again.records == [{"n": 1}, {"n": 2}] and again.torn_bytes > 0
    assert path.stat().st_size == good
    again.append([{"n": 4}])
    again.close()
    assert RecordLog(path).records == [{"n": 1}, {"n": 2}, {"n": 4}]


def test_a_record_whose_checksum_fails_ends_the_log(tmp_path):
    path = tmp_path / "r.log"
    log = RecordLog(path)
    log.append([{"n": 1}, {"n": 2}])
    log.close()
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 0x01  # a flipped bit in the last record
    path.write_bytes(bytes(raw))
    assert RecordLog(path).records == [{"n": 1}]


def test_appends_are_fsynced_before_they_return(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    log = RecordLog(tmp_path / "r.log")
    synced.clear()
    log.append([{"n": 1}])
    assert len(synced) == 1


def test_an_event_acknowledged_after_a_torn_tail_survives_the_next_restart(tmp_path):
    dirs = [tmp_path / f"n{i}" for i in range(2)]
    net = make_network(2, data_dirs=dirs)
    net[0].submit("task_create", {"title": "before", "reward": 1})
    sync(net)
    with (dirs[1] / "events.log").open("ab") as fh:
        fh.write(b'{"author": "torn')  # a crash in the middle of an append
    restarted = NodeCore("n2", dirs[1])
    assert restarted.stats["torn_bytes_dropped"] > 0
    assert comparable(restarted.state) == comparable(net[1].state)
    restarted.submit("task_create", {"title": "after", "reward": 1})
    again = NodeCore("n2", dirs[1])
    titles = {t["title"] for t in again.state["channels"]["general"]["tasks"].values()}
    assert titles == {"before", "after"}


def test_raft_term_vote_and_log_survive_a_restart_and_a_torn_record(tmp_path):
    dirs = [tmp_path / f"n{i}" for i in range(1)]
    node = make_network(1, data_dirs=dirs)[0]
    raft = node.ensure_raft(seed=1)
    for _ in range(40):
        raft.tick()
    assert raft.role == "leader"
    raft.propose({"proposal_id": "p1"})
    node.persist_raft()
    raft.propose({"proposal_id": "p2"})
    node.persist_raft()
    term, log = raft.hard.term, list(raft.hard.log)
    with (dirs[0] / "raft.log").open("ab") as fh:
        fh.write(b'00000000 {"from": 1, "entr')
    again = NodeCore("n1", dirs[0]).ensure_raft()
    assert again.hard.term == term and again.hard.voted_for == node.node_id
    assert again.hard.log == log and [e["data"].get("proposal_id") for e in log[-2:]] == ["p1", "p2"]


def test_a_follower_truncation_is_persisted(tmp_path):
    node = make_network(1, data_dirs=[tmp_path / "n1"])[0]
    raft = node.ensure_raft()
    raft.hard.log.extend([{"term": 1, "data": {"a": 1}}, {"term": 1, "data": {"a": 2}}])
    raft.dirty = True
    node.persist_raft()
    del raft.hard.log[1:]
    raft.hard.log.append({"term": 2, "data": {"a": 3}})
    raft.dirty = True
    node.persist_raft()
    assert NodeCore("n1", tmp_path / "n1").ensure_raft().hard.log == [
        {"term": 1, "data": {"a": 1}},
        {"term": 2, "data": {"a": 3}},
    ]
