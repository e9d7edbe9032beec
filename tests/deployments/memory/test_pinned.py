"""Pinned vectors held in memory: exactly SQLite's pinned rows, read again after every change that touches them."""

from __future__ import annotations

import os

import numpy as np
import pytest

from deployments.memory import pinned, vsearch
from deployments.memory.records import now_ms
from deployments.memory.store import Store
from tests.deployments.memory.test_ann import DIM_BYTES, MIN_SIM, MODEL, memory_id, text_of, vector


@pytest.fixture
def store(tmp_path):
    """300 memories, every 10th pinned, a fifth of them in scope `work`."""
    pinned._HELD.clear()
    s = Store(str(tmp_path / "db" / "m.db"))
    now = now_ms()
    with s.write() as conn:
        for i in range(300):
            text = text_of(i)
            s._insert(
                conn,
                "work" if i % 5 == 0 else "user",
                f"k{i}",
                text,
                [],
                "",
                now + i,
                False,
                i % 10 == 3,
                vector(text),
                MODEL,
            )
    yield s
    pinned._HELD.clear()
    s.close()


def from_sqlite(s: Store, text: str, scope: str) -> list[tuple[int, float]]:
    """The reference: every active pinned row of the scope read from SQLite and scored."""
    where = "pinned = 1 AND archived = 0" + ("" if scope == "*" else " AND scope = ?")
    args = () if scope == "*" else (scope,)
    return vsearch._scored(s.conn, query(text), where, args, MODEL, DIM_BYTES, MIN_SIM)


def query(text: str):
    return np.frombuffer(vector(text), dtype="<f4")


def held_hits(s: Store, text: str, scope: str = "user") -> list[tuple[int, float]]:
    return pinned.hits(s.path, s.conn, MODEL, query(text), scope, MIN_SIM)


def assert_same(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [v for _, v in got] == pytest.approx([v for _, v in want], abs=1e-6)


@pytest.mark.parametrize("scope", ["user", "work", "*", "nowhere"])
def test_the_same_hits_as_reading_sqlite(store, scope):
    for text in (text_of(3), text_of(13), "deploy release backup kernel"):
        want = from_sqlite(store, text, scope)
        assert_same(held_hits(store, text, scope), want)
    assert from_sqlite(store, text_of(3), "*")  # the comparison is not between empty lists


def held(s: Store):
    return pinned.current(s.path, s.conn, MODEL, DIM_BYTES)


def test_held_until_a_pinned_row_changes(store):
    first = held(store)
    assert len(first.ids) == 30
    assert held(store) is first  # no change: no read
    store.save("user", "k1", "an unpinned memory edited", vector=vector("x"), model=MODEL)
    store.save("user", "fresh", "a new unpinned memory", vector=vector("y"), model=MODEL)
    store.verify("user", "k13")  # a pinned row, but nothing the vector search reads
    assert held(store) is first


def reembed(s: Store) -> None:
    s.set_embeddings([(memory_id(s, "k13"), vector("a brand new text about gardens"))], MODEL)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda s: s.set_pinned("user", "k1", True), id="pin"),
        pytest.param(lambda s: s.set_pinned("user", "k13", False), id="unpin"),
        pytest.param(lambda s: s.delete("user", "k13"), id="delete"),
        pytest.param(lambda s: s.save("user", "k13", "rewritten", vector=vector("z"), model=MODEL), id="save"),
        pytest.param(lambda s: s.save("user", "k13", "rewritten without a vector"), id="vector-dropped"),
        pytest.param(lambda s: s.supersede("user", "k13", "k13b", "the pinned one, new"), id="supersede"),
        pytest.param(reembed, id="reembed"),
        pytest.param(
            lambda s: s.conn.execute("UPDATE memories SET scope = 'work' WHERE key = 'k13'"), id="scope-moved"
        ),
    ],
)
def test_every_change_to_a_pinned_row_is_seen_by_the_next_search(store, change):
    before = held(store)
    change(store)
    after = held(store)
    assert after is not before
    for scope in ("user", "work", "*"):
        for text in (text_of(13), text_of(1), "a brand new text about gardens"):
            assert_same(held_hits(store, text, scope), from_sqlite(store, text, scope))


def test_another_database_at_the_same_path_is_not_mistaken(store, tmp_path):
    held(store)
    path = store.path
    store.close()
    for leftover in (path, path + "-wal", path + "-shm"):
        if os.path.exists(leftover):
            os.unlink(leftover)
    other = Store(path)
    other.save("user", "only", text_of(200), vector=vector(text_of(200)), model=MODEL)
    other.set_pinned("user", "only", True)
    try:
        assert [i for i, _ in held_hits(other, text_of(200), "*")] == [memory_id(other, "only")]
    finally:
        other.close()
