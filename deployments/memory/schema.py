"""Schema versions of the memory store and the migrations between them.

`PRAGMA user_version` holds the version. Each step runs inside one
`BEGIN IMMEDIATE` transaction together with the version bump, so a crash or a
concurrent `mem` process never sees a half-migrated file: either the step and
its version number are both committed or neither is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

V1 = """
CREATE TABLE memories (
    id          INTEGER PRIMARY KEY,
    scope       TEXT    NOT NULL DEFAULT 'user',
    key         TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    tags        TEXT    NOT NULL DEFAULT '',
    pinned      INTEGER NOT NULL DEFAULT 0,
    archived    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (scope, key)
);
CREATE TABLE memory_links (
    from_id     INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    rel         TEXT    NOT NULL,
    to_id       INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (from_id, rel, to_id)
) WITHOUT ROWID;
CREATE INDEX memory_links_to ON memory_links (to_id, rel);
"""

V2 = """
ALTER TABLE memories ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN verified_at INTEGER NOT NULL DEFAULT 0;
"""

V3 = """
ALTER TABLE memories ADD COLUMN embedding BLOB;
ALTER TABLE memories ADD COLUMN embedding_model TEXT NOT NULL DEFAULT '';
CREATE INDEX memories_listing ON memories (scope, archived, pinned DESC, updated_at DESC);
"""

# External-content FTS5 table: the text lives once, in `memories`; triggers keep
# the index in step inside the writing transaction.
V4 = """
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, value, tags,
    content='memories', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2',
    prefix='2 3'
);
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, key, value, tags) VALUES (new.id, new.key, new.value, new.tags);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, value, tags)
        VALUES ('delete', old.id, old.key, old.value, old.tags);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF key, value, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, value, tags)
        VALUES ('delete', old.id, old.key, old.value, old.tags);
    INSERT INTO memories_fts (rowid, key, value, tags) VALUES (new.id, new.key, new.value, new.tags);
END;
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
"""

# A counter bumped by every change that alters the set of searchable vectors,
# so the vector cache (vcache.py) knows when it is stale; and the BM25 column
# weights (key 3, value 1, tags 2) as the index's default rank, so that
# `ORDER BY rank LIMIT n` can use FTS5's top-n shortcut.
V5 = """
INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(3.0, 1.0, 2.0)');
CREATE TABLE mem_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO mem_meta (name, value) VALUES ('vector_generation', 0);
CREATE TRIGGER memories_vec_ai AFTER INSERT ON memories WHEN new.embedding IS NOT NULL BEGIN
    UPDATE mem_meta SET value = value + 1 WHERE name = 'vector_generation';
END;
CREATE TRIGGER memories_vec_ad AFTER DELETE ON memories WHEN old.embedding IS NOT NULL BEGIN
    UPDATE mem_meta SET value = value + 1 WHERE name = 'vector_generation';
END;
CREATE TRIGGER memories_vec_au AFTER UPDATE OF embedding, embedding_model, archived, pinned, scope ON memories BEGIN
    UPDATE mem_meta SET value = value + 1 WHERE name = 'vector_generation';
END;
"""

# The change log of the HNSW index (ann.py): every change to the set of indexed
# vectors (a vector added, replaced or removed, a memory archived or brought
# back, a row deleted) appends the memory's id. The index records the last `seq`
# it holds (its high-water mark); a later entry is a change it has not seen yet.
# AUTOINCREMENT: a `seq` is never reused, even after old entries are pruned.
# `store_id` tells one database from another at the same path (an index built
# for another file is never used). The partial index finds the pinned rows.
V6 = """
CREATE TABLE vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, memory_id INTEGER NOT NULL);
CREATE TRIGGER memories_vlog_ai AFTER INSERT ON memories WHEN new.embedding IS NOT NULL BEGIN
    INSERT INTO vector_log (memory_id) VALUES (new.id);
END;
CREATE TRIGGER memories_vlog_ad AFTER DELETE ON memories WHEN old.embedding IS NOT NULL BEGIN
    INSERT INTO vector_log (memory_id) VALUES (old.id);
END;
CREATE TRIGGER memories_vlog_au AFTER UPDATE OF embedding, embedding_model, archived ON memories BEGIN
    INSERT INTO vector_log (memory_id) VALUES (new.id);
END;
INSERT INTO mem_meta (name, value) VALUES ('store_id', abs(random()));
INSERT INTO mem_meta (name, value) VALUES ('vector_log_floor', 0);
CREATE INDEX memories_pinned ON memories (scope) WHERE pinned = 1 AND archived = 0;
"""

# Prefix indexes for 4-, 5- and 6-letter prefixes too: every bare query word is a
# prefix (`"return"*`), and a prefix without its own index makes FTS5 merge the
# posting lists of every word starting with it (return, returns, returned, ...)
# in full before it can stop at the newest matches: 20-60 ms of CPU at 1M
# memories. With the index it reads one list, newest first, and stops early.
# The FTS data grows by about half; the triggers of V4 keep working (they name the table).
# `optimize` merges the rebuilt index into one segment: a query then walks one
# list per term instead of one per segment (half the time at 100k memories).
V7 = """
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, value, tags,
    content='memories', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2',
    prefix='2 3 4 5 6'
);
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
INSERT INTO memories_fts (memories_fts) VALUES ('optimize');
INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(3.0, 1.0, 2.0)');
"""

# A stamp of the set of pinned vectors (pinned.py keeps them in memory): a fresh random
# value on every insert or delete of a pinned row and every change to a pinned row's
# pin, archive flag, scope or vector. Random rather than a counter, so a database copied
# back over a newer one never repeats a stamp that stood for other contents.
V8 = """
INSERT INTO mem_meta (name, value) VALUES ('pinned_stamp', abs(random()));
CREATE TRIGGER memories_pin_ai AFTER INSERT ON memories WHEN new.pinned = 1 BEGIN
    UPDATE mem_meta SET value = abs(random()) WHERE name = 'pinned_stamp';
END;
CREATE TRIGGER memories_pin_ad AFTER DELETE ON memories WHEN old.pinned = 1 BEGIN
    UPDATE mem_meta SET value = abs(random()) WHERE name = 'pinned_stamp';
END;
CREATE TRIGGER memories_pin_au AFTER UPDATE OF pinned, archived, scope, embedding, embedding_model ON memories
WHEN old.pinned = 1 OR new.pinned = 1 BEGIN
    UPDATE mem_meta SET value = abs(random()) WHERE name = 'pinned_stamp';
END;
"""

# Full-text ranking at 1M memories (README, "Search and ranking"):
# - prefix indexes for 7 and 8 letters: a bare query word is a prefix, and a prefix longer than the
#   longest prefix index makes FTS5 merge the posting lists of every word starting with it into memory
#   before it returns a row (`"returns"*`: 6 ms of CPU at 1M memories, against 0.3 ms with an index);
# - `memories_pinned_fts`, the same text of the active pinned memories only (its own copy, kept by the
#   triggers below): the older pinned matches of a common word are found there instead of by walking
#   the word's whole posting list in the main index, and scored as the main index would (store.py).
V9 = """
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, value, tags,
    content='memories', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2',
    prefix='2 3 4 5 6 7 8'
);
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
INSERT INTO memories_fts (memories_fts) VALUES ('optimize');
INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(3.0, 1.0, 2.0)');
CREATE VIRTUAL TABLE memories_pinned_fts USING fts5 (
    key, value, tags,
    tokenize='unicode61 remove_diacritics 2',
    prefix='2 3 4 5 6 7 8'
);
INSERT INTO memories_pinned_fts (rowid, key, value, tags)
    SELECT id, key, value, tags FROM memories WHERE pinned = 1 AND archived = 0;
CREATE TRIGGER memories_pfts_ai AFTER INSERT ON memories WHEN new.pinned = 1 AND new.archived = 0 BEGIN
    INSERT INTO memories_pinned_fts (rowid, key, value, tags) VALUES (new.id, new.key, new.value, new.tags);
END;
CREATE TRIGGER memories_pfts_ad AFTER DELETE ON memories WHEN old.pinned = 1 AND old.archived = 0 BEGIN
    DELETE FROM memories_pinned_fts WHERE rowid = old.id;
END;
CREATE TRIGGER memories_pfts_au AFTER UPDATE OF key, value, tags, pinned, archived ON memories
WHEN (old.pinned = 1 AND old.archived = 0) OR (new.pinned = 1 AND new.archived = 0) BEGIN
    DELETE FROM memories_pinned_fts WHERE rowid = old.id;
    INSERT INTO memories_pinned_fts (rowid, key, value, tags)
        SELECT new.id, new.key, new.value, new.tags WHERE new.pinned = 1 AND new.archived = 0;
END;
"""

# What full-text search reads of each of its 1000 candidates (active? scope? pinned? updated?) in a
# narrow index: from the table itself each lookup lands on a ~2 KB row (value and vector), so a
# search at 1M memories touched ~1000 scattered pages of a 2.6 GB file.
V10 = """
CREATE INDEX memories_search ON memories (id, archived, scope, pinned, updated_at);
"""

MIGRATIONS: tuple[str, ...] = (V1, V2, V3, V4, V5, V6, V7, V8, V9, V10)
LATEST = len(MIGRATIONS)


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run statements one by one (executescript would COMMIT our transaction)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""
    if buffer.strip():
        conn.execute(buffer)


def current_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, target: int = LATEST, on_step: Callable[[int], None] | None = None) -> int:
    """Bring the schema up to `target`, one transaction per step; returns the final version.

    The version is re-read inside each transaction, so two processes opening a
    fresh file at once do not apply the same step twice.
    """
    if target > LATEST:
        raise ValueError(f"unknown schema version {target}")
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = current_version(conn)
            if version > LATEST:
                conn.execute("ROLLBACK")
                raise RuntimeError(f"database schema version {version} is newer than this mem ({LATEST}); upgrade mem")
            if version >= target:
                conn.execute("COMMIT")
                return version
            _run_script(conn, MIGRATIONS[version])
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if on_step is not None:
            on_step(version + 1)
