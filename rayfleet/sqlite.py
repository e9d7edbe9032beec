"""One way to open a SQLite database a component owns.

WAL journal (readers never wait for the writer), a busy timeout instead of
"database is locked" errors under concurrent writers, foreign keys on, and the
parent folder created with owner-only permissions.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["connect"]

BUSY_TIMEOUT_S = 10.0


def connect(
    path: str | os.PathLike[str],
    *,
    wal: bool = True,
    check_same_thread: bool = False,
    autocommit: bool = False,
    row_factory: bool = True,
) -> sqlite3.Connection:
    """Open (creating it if needed) the database at `path`; ``":memory:"`` works too.

    `autocommit=True` gives SQLite's own autocommit (explicit BEGIN/COMMIT); the default
    keeps Python's implicit transactions. `row_factory` makes rows `sqlite3.Row` (access by column name).
    """
    target = str(path)
    if target != ":memory:":
        folder = Path(target).parent
        if not folder.exists():
            folder.mkdir(parents=True, mode=0o700, exist_ok=True)
    conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, check_same_thread=check_same_thread)
    if autocommit:
        conn.isolation_level = None
    if row_factory:
        conn.row_factory = sqlite3.Row
    if wal and target != ":memory:":
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn
