"""rayfleet.sqlite.connect: WAL, busy timeout, foreign keys, private folder."""

from __future__ import annotations

import stat

from rayfleet.sqlite import connect


def test_connect_creates_a_private_folder_and_uses_wal(tmp_path):
    db = tmp_path / "deep" / "store.db"
    conn = connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10000
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    conn.execute("CREATE TABLE t (name TEXT)")
    conn.execute("INSERT INTO t VALUES ('a')")
    conn.commit()
    assert connect(db).execute("SELECT name FROM t").fetchone()["name"] == "a"


def test_autocommit_and_memory():
    conn = connect(":memory:", autocommit=True)
    assert conn.isolation_level is None
    conn.execute("CREATE TABLE t (x)")
    assert not conn.in_transaction
