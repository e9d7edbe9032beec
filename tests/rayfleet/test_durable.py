"""Durable actor state: what was acknowledged comes back after a restart, in both stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from rayfleet.durable import DSN_ENV, DurableMap, DurableState, Fenced, PostgresStore, SqliteStore, open_store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request, tmp_path):
    """A factory of stores over the same database (each call is another process's connection)."""
    opened = []
    if request.param == "sqlite":
        path = tmp_path / "durable.sqlite3"

        def make():
            opened.append(SqliteStore(path))
            return opened[-1]
    else:
        dsn = request.getfixturevalue("postgres_dsn")

        def make():
            opened.append(PostgresStore(dsn))
            return opened[-1]

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def stream() -> str:
    return f"test-{uuid.uuid4().hex}"


def test_an_acknowledged_change_survives_a_restart(make_store, stream):
    bans = DurableMap(make_store(), stream)
    bans.set("198.18.0.7", {"reason": "flood", "until": 1_900_000_000})
    bans.set("198.18.0.8", {"reason": "waf"})
    bans.delete("198.18.0.8")

    again = DurableMap(make_store(), stream)
    assert again.items() == [("198.18.0.7", {"reason": "flood", "until": 1_900_000_000})]


def test_snapshots_bound_replay_and_keep_the_state(make_store, stream):
    rules = DurableMap(make_store(), stream, snapshot_every=10)
    for i in range(25):
        rules.set(f"r{i}", i)
    rules.delete("r3")

    again = DurableState(
        make_store(), stream, initial=dict, apply=_apply_counting, dump=dict, load=dict, snapshot_every=10
    )
    assert again.state == {f"r{i}": i for i in range(25) if i != 3}
    assert again.replayed == 6  # the 26 operations minus the 20 the last snapshot covers
    assert again.seq == 26


def _apply_counting(state, op):
    if "set" in op:
        state[op["set"]] = op["value"]
    else:
        state.pop(op["delete"], None)


def test_a_newer_instance_fences_the_old_one_out(make_store, stream):
    """A restarted actor takes over the stream; its predecessor (a zombie) can no longer write."""
    old = DurableMap(make_store(), stream)
    old.set("policy", "strict")
    new = DurableMap(make_store(), stream)
    assert new.epoch == old.epoch + 1

    with pytest.raises(Fenced):
        old.set("policy", "off")
    with pytest.raises(Fenced):
        old.set_many({"a": 1, "b": 2})
    new.set("policy", "balanced")

    assert DurableMap(make_store(), stream).items() == [("policy", "balanced")]


def test_a_batch_is_all_or_nothing(make_store, stream):
    first = DurableMap(make_store(), stream)
    DurableMap(make_store(), stream)  # takes the stream over
    with pytest.raises(Fenced):
        first.set_many({"a": 1, "b": 2, "c": 3})
    assert len(first) == 0
    assert DurableMap(make_store(), stream).items() == []


def test_a_record_that_cannot_be_applied_is_skipped_on_replay(make_store, stream):
    store = make_store()
    state = DurableState(store, stream, initial=list, apply=lambda s, op: s.append(op["n"]), dump=list, load=list)
    state.record({"n": 1})
    store.append(stream, state.epoch, [json.dumps({"not n": 2})])
    state.seq += 1
    again = DurableState(
        make_store(), stream, initial=list, apply=lambda s, op: s.append(op["n"]), dump=list, load=list
    )
    assert again.state == [1] and again.replayed == 1


def test_streams_are_separate(make_store, stream):
    DurableMap(make_store(), stream + "-a").set("k", "a")
    DurableMap(make_store(), stream + "-b").set("k", "b")
    assert DurableMap(make_store(), stream + "-a")["k"] == "a"


WRITER = """
import sys
from rayfleet.durable import DurableMap, SqliteStore
journal = DurableMap(SqliteStore(sys.argv[1]), "writes")
i = 0
while True:
    journal.set(f"w{i}", i)
    print(i, flush=True)
    i += 1
"""


def test_writes_acknowledged_before_a_sigkill_are_all_there(tmp_path):
    """Jepsen in small: a writer is killed at an arbitrary point; every write it acknowledged is kept."""
    path = tmp_path / "kill.sqlite3"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    acknowledged = []
    assert child.stdout is not None
    for line in child.stdout:
        acknowledged.append(int(line))
        if len(acknowledged) == 200:
            child.send_signal(signal.SIGKILL)
            break
    child.wait()
    kept = DurableMap(SqliteStore(path), "writes")
    assert all(f"w{i}" in kept for i in acknowledged)
    assert len(kept) >= 200


def test_open_store_reads_the_setting(tmp_path, monkeypatch, postgres_dsn):
    monkeypatch.setenv(DSN_ENV, f"sqlite:///{tmp_path}/x.sqlite3")
    store = open_store()
    assert isinstance(store, SqliteStore) and store.path == tmp_path / "x.sqlite3"
    store.close()
    pg = open_store(postgres_dsn)
    assert isinstance(pg, PostgresStore)
    pg.close()


def test_an_unknown_store_url_is_refused_without_echoing_it(monkeypatch):
    monkeypatch.setenv(DSN_ENV, "mysql://root:hunter2@db/x")
    with pytest.raises(ValueError) as refused:
        open_store()
    assert "hunter2" not in str(refused.value) and "'mysql'" in str(refused.value)
