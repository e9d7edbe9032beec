"""The HNSW index beside the database: written, kept in step, repaired after a crash, rebuilt, and close to exact.

Stores of a few thousand memories with the threshold lowered, so the index path
runs; the flat scan of the same store is the reference every answer is checked against.
"""

from __future__ import annotations

import json
import os
import shutil
import stat

import numpy as np
import pytest

from deployments.memory import ann, embed, vsearch
from deployments.memory.records import now_ms
from deployments.memory.store import Store, embedding_text
from tests.deployments.memory.embedserver import DIM, hashed_vector

MODEL = "m"
DIM_BYTES = DIM * 4
MIN_SIM = 0.25
WORDS = [
    "deploy",
    "release",
    "backup",
    "coffee",
    "network",
    "printer",
    "invoice",
    "budget",
    "kernel",
    "python",
    "rust",
    "docker",
    "cluster",
    "token",
    "schedule",
    "meeting",
    "garden",
    "recipe",
    "travel",
    "museum",
    "guitar",
    "camera",
    "battery",
    "window",
    "server",
    "router",
    "laptop",
    "database",
    "migration",
    "index",
    "query",
    "cache",
    "replica",
    "shard",
    "ticket",
    "review",
    "branch",
    "commit",
    "merge",
    "test",
]


def text_of(i: int) -> str:
    rng = np.random.default_rng(i)
    return " ".join(WORDS[j] for j in rng.choice(len(WORDS), size=6, replace=False)) + f" note{i}"


def vector(text: str) -> bytes:
    return embed.pack(hashed_vector(embedding_text(text, []), DIM))


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(ann, "THRESHOLD", 500)
    s = Store(str(tmp_path / "db" / "m.db"))
    now = now_ms()
    with s.write() as conn:
        for i in range(3000):
            text = text_of(i)
            scope = "work" if i % 20 == 0 else "user"
            s._insert(conn, scope, f"k{i}", text, [], "", now + i, False, i % 300 == 7, vector(text), MODEL)
    ann._OPEN.clear()
    yield s
    ann._OPEN.clear()
    s.close()


def hits(s: Store, text: str, scope: str = "user", depth: int = 30) -> list[tuple[int, float]]:
    return vsearch.vector_hits(s.path, s.conn, MODEL, vector(text), scope, depth, MIN_SIM)


def flat_hits(s: Store, text: str, scope: str = "user", depth: int = 30) -> list[tuple[int, float]]:
    from deployments.memory import vcache

    matrix, rows, scopes = vcache.read(s.conn, MODEL, DIM_BYTES)
    query = np.frombuffer(vector(text), dtype="<f4")
    return vsearch._flat(query, matrix, rows, scopes, scope, depth, MIN_SIM)


def assert_same(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    """As long as the flat list; at least 90% of the same ids (the index is approximate and these
    test texts tie often); every shared id with the flat scan's exact cosine; pinned-first order kept."""
    assert len(got) == len(want)
    exact = dict(want)
    shared = [(i, s) for i, s in got if i in exact]
    assert len(shared) >= 0.9 * len(want)
    assert [s for _, s in shared] == pytest.approx([exact[i] for i, _ in shared], abs=1e-6)
    assert [i for i, _ in got[:3]] == [i for i, _ in want[:3]]


def meta(s: Store) -> dict:
    with open(ann._meta_path(s.path, MODEL, DIM_BYTES), encoding="utf-8") as fh:
        return dict(json.load(fh))


def index_file(s: Store) -> str:
    return os.path.join(ann.folder(s.path), f"{ann._stem(MODEL, DIM_BYTES)}-{meta(s)['token']}.usearch")


def on_disk(s: Store) -> set[int]:
    from usearch.index import Index

    return {int(k) for k in Index.restore(index_file(s), view=True).keys}


def memory_id(s: Store, key: str, scope: str = "user") -> int:
    return int(s.conn.execute("SELECT id FROM memories WHERE scope = ? AND key = ?", (scope, key)).fetchone()[0])


def test_built_private_with_the_store_high_water_mark(store):
    hits(store, text_of(5))
    m = meta(store)
    assert m["hwm"] == ann.high_water(store.conn) and m["count"] == 3000
    assert stat.S_IMODE(os.stat(ann.folder(store.path)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(index_file(store)).st_mode) == 0o600
    assert len(on_disk(store)) == 3000
    # Every log entry the index holds is pruned.
    assert store.conn.execute("SELECT count(*) FROM vector_log").fetchone()[0] == 0


def test_below_the_threshold_no_index(store, monkeypatch):
    monkeypatch.setattr(ann, "THRESHOLD", 10_000)
    assert_same(hits(store, text_of(5)), flat_hits(store, text_of(5)))
    assert not os.path.exists(ann._meta_path(store.path, MODEL, DIM_BYTES))


def test_recall_at_10_against_the_exact_scan(store):
    queries = [text_of(i) for i in range(3000, 3060)] + [" ".join(WORDS[i : i + 3]) for i in range(0, 40, 2)]
    found = total = 0
    for q in queries:
        exact = {i for i, _ in flat_hits(store, q, depth=10)}
        found += len(exact & {i for i, _ in hits(store, q, depth=10)})
        total += len(exact)
    assert total > 500
    assert found / total >= 0.95


@pytest.mark.parametrize("scope", ["user", "work", "*"])
def test_same_order_and_scores_as_flat_pinned_first(store, scope):
    """Scores are exact (re-read from SQLite); pinned matches come first on both paths."""
    for q in (text_of(7), text_of(2207), "deploy release backup"):
        assert_same(hits(store, q, scope), flat_hits(store, q, scope))
    pinned = {memory_id(store, f"k{i}", "work" if i % 20 == 0 else "user") for i in range(7, 3000, 300)}
    top = hits(store, "deploy release backup", "*")
    n_pinned = sum(1 for i, _ in top if i in pinned)
    assert n_pinned and all(i in pinned for i, _ in top[:n_pinned])


def test_pins_by_another_process_are_seen_by_the_next_search(store):
    """The pinned vectors this process holds are read again when another process pins or unpins."""
    text = "deploy release backup"
    before = hits(store, text)
    unpinned_best = next(i for i, _ in before if i not in pinned_ids(store))
    other = Store(store.path)
    key = other.conn.execute("SELECT key FROM memories WHERE id = ?", (unpinned_best,)).fetchone()[0]
    other.set_pinned("user", key, True)
    first_pinned = hits(store, text)
    assert unpinned_best in [i for i, _ in first_pinned[: len(pinned_ids(store))]]
    assert_same(first_pinned, flat_hits(store, text))
    other.set_pinned("user", key, False)
    other.close()
    assert_same(hits(store, text), flat_hits(store, text))
    assert_same(hits(store, text), before)


def pinned_ids(s: Store) -> set[int]:
    return {r[0] for r in s.conn.execute("SELECT id FROM memories WHERE pinned = 1 AND archived = 0")}


def test_delete_never_comes_back(store, monkeypatch):
    hits(store, text_of(42))
    gone = memory_id(store, "k42")
    assert gone in {i for i, _ in hits(store, text_of(42))}
    store.delete("user", "k42")
    assert gone not in {i for i, _ in hits(store, text_of(42))}  # pending: masked at once
    assert gone in on_disk(store)  # not folded yet
    monkeypatch.setattr(ann, "FOLD_AT", 0)
    assert gone not in {i for i, _ in hits(store, text_of(42))}
    assert gone not in on_disk(store) and meta(store)["hwm"] == ann.high_water(store.conn)
    ann._OPEN.clear()  # a new process
    assert gone not in {i for i, _ in hits(store, text_of(42))}


def test_archived_and_replaced_vectors_follow(store):
    hits(store, text_of(1))
    store.supersede("user", "k43", "k43b", text_of(43) + " again", vector=vector(text_of(43) + " again"), model=MODEL)
    old, new = memory_id(store, "k43"), memory_id(store, "k43b")
    found = {i for i, _ in hits(store, text_of(43))}
    assert new in found and old not in found
    assert_same(hits(store, text_of(43)), flat_hits(store, text_of(43)))


def test_saves_found_at_once_and_folded(store, monkeypatch):
    hits(store, text_of(1))
    before = meta(store)["token"]
    store.save(
        "user",
        "fresh",
        "quantum gardening with espresso",
        vector=vector("quantum gardening with espresso"),
        model=MODEL,
    )
    fresh = memory_id(store, "fresh")
    assert hits(store, "quantum gardening espresso")[0][0] == fresh
    assert meta(store)["token"] == before  # served from the pending list, file untouched
    monkeypatch.setattr(ann, "FOLD_AT", 0)
    hits(store, "quantum gardening espresso")
    assert meta(store)["token"] != before and fresh in on_disk(store)
    assert meta(store)["hwm"] == ann.high_water(store.conn)


def test_crash_between_store_write_and_index_write_repaired_at_start(store, monkeypatch):
    hits(store, text_of(1))
    # Another process writes (store commits, its log entries with it) and dies before any index write.
    gone = memory_id(store, "k99")
    other = Store(store.path)
    other.save(
        "user", "late", "volcano photography workshop", vector=vector("volcano photography workshop"), model=MODEL
    )
    other.delete("user", "k99")
    other.close()
    late = memory_id(store, "late")
    ann._OPEN.clear()
    monkeypatch.setattr(ann, "FOLD_AT", 0)

    def crash(*args: object) -> None:
        raise OSError("disk full while writing the index")

    monkeypatch.setattr(ann, "_publish", crash)
    with pytest.raises(OSError):
        hits(store, "volcano photography")
    monkeypatch.undo()
    monkeypatch.setattr(ann, "THRESHOLD", 500)
    monkeypatch.setattr(ann, "FOLD_AT", 0)
    ann._OPEN.clear()  # restart: the published index is the old one; the log says what it misses
    assert hits(store, "volcano photography")[0][0] == late
    assert late in on_disk(store) and meta(store)["hwm"] == ann.high_water(store.conn)
    k99 = {i for i, _ in hits(store, text_of(99))}
    assert gone not in k99
    assert_same(hits(store, text_of(99)), flat_hits(store, text_of(99)))


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage", "meta", "other-store"])
def test_rebuilt_when_missing_or_corrupt(store, damage, tmp_path):
    want = hits(store, text_of(11))
    path, token = index_file(store), meta(store)["token"]
    if damage == "missing":
        os.unlink(path)
    elif damage == "truncated":
        with open(path, "r+b") as fh:
            fh.truncate(os.path.getsize(path) // 2)
    elif damage == "garbage":
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.write(os.urandom(size))
    elif damage == "meta":
        with open(ann._meta_path(store.path, MODEL, DIM_BYTES), "w") as fh:
            fh.write("{not json")
    else:
        # The index of another database copied beside this one is never used.
        store.conn.execute("UPDATE mem_meta SET value = value + 1 WHERE name = 'store_id'")
    ann._OPEN.clear()
    assert_same(hits(store, text_of(11)), want)
    assert meta(store)["token"] != token and len(on_disk(store)) == 3000


def test_older_copy_of_the_database_rebuilds(store, tmp_path, monkeypatch):
    """An index ahead of the store's log (a database restored from a backup) is not trusted."""
    backup = str(tmp_path / "backup.db")
    store.conn.execute("VACUUM INTO ?", (backup,))
    hits(store, text_of(1))
    store.save("user", "after", "written after the backup", vector=vector("written after the backup"), model=MODEL)
    monkeypatch.setattr(ann, "FOLD_AT", 0)
    ann.load(store.path, store.conn, MODEL, DIM_BYTES)  # folds: the index now holds "after"
    assert memory_id(store, "after") in on_disk(store)
    ann._OPEN.clear()
    shutil.copytree(ann.folder(store.path), backup + ".vectors")
    restored = Store(backup)
    try:
        want = flat_hits(restored, "written after the backup")
        assert_same(hits(restored, "written after the backup"), want)
        assert memory_id(store, "after") not in {i for i, _ in want}
    finally:
        restored.close()
