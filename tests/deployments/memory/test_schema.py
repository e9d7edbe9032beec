"""Migrations: from every earlier schema version to the latest, data kept; each step all-or-nothing."""

from __future__ import annotations

import sqlite3

import pytest

from deployments.memory import schema
from deployments.memory.errors import StorageError
from deployments.memory.store import Store

ROWS = [
    ("user", "deploy", "Deploy with make release", "ops"),
    ("user", "editor", "Neovim with lazy.nvim", ""),
    ("repo:x", "deploy", "Repo deploy uses GitHub Actions", "ci,ops"),
]


def make_db(path: str, version: int) -> None:
    """A database as a `mem` at schema `version` left it, with three memories and a link."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    schema.migrate(conn, target=version)
    for i, (scope, key, value, tags) in enumerate(ROWS, start=1):
        conn.execute(
            "INSERT INTO memories (scope, key, value, tags, pinned, archived, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
            (scope, key, value, tags, int(i == 2), 1000 * i, 1000 * i),
        )
    conn.execute("INSERT INTO memory_links (from_id, rel, to_id, created_at) VALUES (1, 'see-also', 2, 5)")
    conn.close()


@pytest.mark.parametrize("version", range(1, schema.LATEST))
def test_upgrade_from_every_earlier_version(tmp_path, version):
    path = str(tmp_path / "m.db")
    make_db(path, version)
    store = Store(path)
    assert schema.current_version(store.conn) == schema.LATEST
    rec = store.get("user", "deploy")
    assert rec["value"] == "Deploy with make release" and rec["tags"] == ["ops"]
    assert rec["links"]["out"] == [{"rel": "see-also", "scope": "user", "key": "editor"}]
    assert rec["verified_at"] is None and rec["origin"] is None and rec["embedding_model"] is None
    assert store.get("user", "editor")["pinned"] is True
    assert store.fts_integrity()
    hits = store.text_search("*", '"deploy"*', 10)
    assert {(h["scope"], h["key"]) for h in hits} == {("user", "deploy"), ("repo:x", "deploy")}
    store.close()
    assert schema.current_version(Store(path).conn) == schema.LATEST  # reopening is a no-op


def test_fresh_database_is_latest(tmp_path):
    store = Store(str(tmp_path / "m.db"))
    assert schema.current_version(store.conn) == schema.LATEST


def test_failed_step_rolls_back(tmp_path, monkeypatch):
    path = str(tmp_path / "m.db")
    make_db(path, 2)
    broken = schema.V3 + "\nCREATE TABLE memories (x);\n"  # fails after the ALTERs ran
    monkeypatch.setattr(schema, "MIGRATIONS", (schema.V1, schema.V2, broken, schema.V4))
    conn = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        schema.migrate(conn)
    assert schema.current_version(conn) == 2
    columns = {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
    assert "embedding" not in columns  # the ALTERs of the failed step are gone too
    conn.close()
    monkeypatch.undo()
    assert schema.current_version(Store(path).conn) == schema.LATEST


def test_newer_schema_is_refused(tmp_path):
    path = str(tmp_path / "m.db")
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.LATEST + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="newer"):
        Store(path)


def test_upgrade_to_v8_stamps_the_pinned_set(tmp_path):
    """V8: a pinned_stamp that every change to a pinned row replaces, and no other write touches."""
    from deployments.memory import pinned

    path = str(tmp_path / "m.db")
    make_db(path, 7)
    store = Store(path)
    first = pinned.stamp(store.conn)
    assert first[1] > 0
    store.save("user", "deploy", "Deploy with make release, now on Fridays too")  # unpinned
    assert pinned.stamp(store.conn) == first
    store.set_pinned("user", "deploy", True)
    second = pinned.stamp(store.conn)
    assert second != first and second[0] == first[0]
    store.close()


@pytest.mark.parametrize("version", [4, 8])
def test_upgrade_to_v9_indexes_long_prefixes_and_the_pinned_memories(tmp_path, version):
    """V9: prefix indexes up to 8 letters and memories_pinned_fts filled with the active pinned rows;
    V10: the narrow index full-text search reads its candidates' flags from."""
    path = str(tmp_path / "m.db")
    make_db(path, version)
    store = Store(path)
    conn = store.conn
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'").fetchone()[0]
    assert "prefix='2 3 4 5 6 7 8'" in sql
    assert [tuple(r) for r in conn.execute("SELECT rowid, key FROM memories_pinned_fts")] == [(2, "editor")]
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_search'").fetchone()
    assert [r["key"] for r in store.text_search("user", '"neovi"*', 5)] == ["editor"]
    assert [r["key"] for r in store.text_search("*", '"deploy"*', 5)] == ["deploy", "deploy"]
    assert store.fts_integrity()
    store.close()
