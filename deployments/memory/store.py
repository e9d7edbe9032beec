"""The memory store: one SQLite file in WAL mode.

Every write runs in a `BEGIN IMMEDIATE` transaction, so concurrent `mem`
processes queue on the write lock (busy timeout 10 s) instead of failing on a
lock upgrade; the FTS index is updated by triggers inside that same transaction.
Links reference memory ids, so a rename never has to touch them and a delete
removes them through `ON DELETE CASCADE`.
"""

from __future__ import annotations

import builtins
import functools
import os
import re
import sqlite3
import sys
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from deployments.memory import schema
from deployments.memory.errors import ConflictError, MemError, NotFoundError, StorageError, UsageError
from deployments.memory.records import (
    ALL_SCOPES,
    COLUMNS,
    check_key,
    check_scope,
    check_value,
    normalize_tags,
    now_ms,
    to_record,
    uri,
)
from rayfleet.sqlite import connect as sqlite_connect

REL_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
SORTS = {
    "updated": "m.updated_at DESC, m.id DESC",
    "created": "m.created_at DESC, m.id DESC",
    "key": "m.key ASC, m.scope ASC",
    "scope": "m.scope ASC, m.key ASC",
}
# BM25 column weights (key, value, tags) are the FTS table's default `rank`
# (schema V5): a word in the key or the tags says more about a memory than the
# same word somewhere in its value.
MAX_DEPTH = 16
# BM25 ranks the pinned matches and the CANDIDATES most recently created
# matches (README, "Ranking"): scoring every match of a very common word
# costs FTS5 ~2 µs a row, 20-60 ms for a word found in 10-30% of 100k memories.
CANDIDATES = 1000
# The any-word stage of a loosened query (README, "Search and ranking") fills the
# list after the exact stage; an OR of common words matches most memories, so it
# ranks fewer candidates and does not walk the older matches for pinned ones.
ANY_CANDIDATES = 200
# Document counts for BM25's IDF (README, "Search and ranking"): exact up to this many matches of a
# phrase; above it, estimated from a sample (phrase_counts). FTS5's own
# bm25() counts every match of every phrase in each statement (7-8 ms of CPU for a word found in a
# quarter of 1M memories); mem_bm25 (_rank.c) takes the counts as arguments.
RANK_COUNT_EXACT = 10_000
BM25_WEIGHTS = (3.0, 1.0, 2.0)  # key, value, tags: the `rank` the schema sets (V7, V9: bm25(3.0, 1.0, 2.0))
COUNT_WINDOWS = 8
LONGEST_PREFIX_INDEX = 8  # schema V9: prefix='2 3 4 5 6 7 8'
PAGE_CACHE_KIB = 65536
_PHRASE = re.compile(r'"(?:[^"]|"")*"\*?')

F = TypeVar("F", bound=Callable[..., Any])


def storage_errors(fn: F) -> F:
    """Turn SQLite failures (locked past the timeout, disk full, corrupt file) into StorageError."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemError:
            raise
        except sqlite3.Error as exc:
            raise StorageError(f"storage error: {exc}") from exc

    return wrapper  # type: ignore[return-value]


def ensure_db_file(path: str) -> None:
    """Create the database folder (0700) and an empty file (0600) if they do not exist."""
    folder = os.path.dirname(path)
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, mode=0o700, exist_ok=True)
            os.chmod(folder, 0o700)
        if not os.path.exists(path):
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.fchmod(fd, 0o600)
            os.close(fd)
    except OSError as exc:
        raise StorageError(f"cannot create database at {path}: {exc.strerror or exc}") from exc


class Store:
    def __init__(self, path: str) -> None:
        self.path = path
        ensure_db_file(path)
        try:
            # WAL, synchronous=NORMAL, foreign keys and the 10 s busy timeout: the platform's setup.
            self.conn = sqlite_connect(path, wal=True, check_same_thread=False, autocommit=True)
            if schema.current_version(self.conn) != schema.LATEST:
                schema.migrate(self.conn)
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        except RuntimeError as exc:
            raise StorageError(str(exc)) from exc
        # mem_bm25 (the compiled _rank module): BM25 with the document counts given. Without it,
        # FTS5's bm25() ranks (the same order; slower on common words: it counts them per statement).
        self.rank_counts = install_rank(self.conn)
        # 64 MiB of page cache (SQLite's default is 2 MiB): a search reads its candidates' sizes
        # (memories_fts_docsize) and flags (memories_search) by id; at 1M memories those are ~45 MB
        # that a 2 MiB cache re-reads from the OS on every search (measured: the main statement of an
        # AND of two common words, 8.8 -> 5.9 ms of CPU). Pages are only taken as they are read.
        self.conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: all of it is committed, or none of it."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # ----- lookups -------------------------------------------------------------

    def _row(self, scope: str, key: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.conn.execute(
            f"SELECT {COLUMNS} FROM memories m WHERE m.scope = ? AND m.key = ?", (scope, key)
        ).fetchone()
        return row

    def _require(self, scope: str, key: str) -> sqlite3.Row:
        row = self._row(scope, key)
        if row is None:
            raise NotFoundError(f"no memory {key!r} in scope {scope!r}")
        return row

    @storage_errors
    def get(self, scope: str, key: str, with_links: bool = True) -> dict[str, Any]:
        row = self._require(check_scope(scope), check_key(key))
        record = to_record(row)
        if with_links:
            record["links"] = self._links_of(row["id"])
        return record

    def _links_of(self, memory_id: int) -> dict[str, builtins.list[dict[str, Any]]]:
        out = self.conn.execute(
            """SELECT l.rel, m.scope, m.key FROM memory_links l JOIN memories m ON m.id = l.to_id
                WHERE l.from_id = ? ORDER BY l.rel, m.scope, m.key""",
            (memory_id,),
        ).fetchall()
        inc = self.conn.execute(
            """SELECT l.rel, m.scope, m.key FROM memory_links l JOIN memories m ON m.id = l.from_id
                WHERE l.to_id = ? ORDER BY l.rel, m.scope, m.key""",
            (memory_id,),
        ).fetchall()
        return {
            "out": [{"rel": r["rel"], "scope": r["scope"], "key": r["key"]} for r in out],
            "in": [{"rel": r["rel"], "scope": r["scope"], "key": r["key"]} for r in inc],
        }

    @storage_errors
    def list(
        self, scope: str, limit: int = 200, pinned_only: bool = False, sort: str = "updated", offset: int = 0
    ) -> builtins.list[dict[str, Any]]:
        check_scope(scope, allow_all=True)
        if sort not in SORTS:
            raise UsageError(f"sort must be one of {', '.join(SORTS)}")
        where = ["m.archived = 0"]
        params: builtins.list[Any] = []
        if scope != ALL_SCOPES:
            where.append("m.scope = ?")
            params.append(scope)
        if pinned_only:
            where.append("m.pinned = 1")
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM memories m WHERE {' AND '.join(where)} "
            f"ORDER BY m.pinned DESC, {SORTS[sort]} LIMIT ? OFFSET ?",
            (*params, check_limit(limit), max(0, offset)),
        ).fetchall()
        return [to_record(r) for r in rows]

    @storage_errors
    def counts(self) -> dict[str, int]:
        row = self.conn.execute(
            """SELECT count(*) AS total, coalesce(sum(archived), 0) AS archived,
                      coalesce(sum(pinned AND NOT archived), 0) AS pinned,
                      coalesce(sum(embedding IS NOT NULL), 0) AS embedded FROM memories"""
        ).fetchone()
        return {
            "total": row["total"],
            "active": row["total"] - row["archived"],
            "archived": row["archived"],
            "pinned": row["pinned"],
            "embedded": row["embedded"],
        }

    @storage_errors
    def embedding_models(self) -> dict[str, int]:
        rows = self.conn.execute(
            """SELECT embedding_model, count(*) AS n FROM memories
                WHERE embedding IS NOT NULL GROUP BY embedding_model"""
        ).fetchall()
        return {r["embedding_model"]: r["n"] for r in rows}

    # ----- writes --------------------------------------------------------------

    @storage_errors
    def save(
        self,
        scope: str,
        key: str,
        value: str,
        tags: object = None,
        origin: str = "",
        vector: bytes | None = None,
        model: str = "",
        detect_conflicts: bool = True,
    ) -> dict[str, Any]:
        """Insert or update. A new key that repeats an active memory supersedes it."""
        scope, key, value = check_scope(scope), check_key(key), check_value(value)
        tag_list = normalize_tags(tags)
        if not isinstance(origin, str) or len(origin) > 2048:
            raise UsageError("origin must be a string of at most 2048 characters")
        from deployments.memory import conflict as conflict_mod

        now = now_ms()
        superseded: conflict_mod.Conflict | None = None
        with self.write() as conn:
            existing = conn.execute(
                "SELECT id, origin FROM memories WHERE scope = ? AND key = ?", (scope, key)
            ).fetchone()
            if existing is not None:
                conn.execute(
                    """UPDATE memories SET value = ?, tags = ?, origin = ?, archived = 0, updated_at = ?,
                              embedding = ?, embedding_model = ? WHERE id = ?""",
                    (
                        value,
                        ",".join(tag_list),
                        origin or existing["origin"],
                        now,
                        vector,
                        model if vector is not None else "",
                        existing["id"],
                    ),
                )
                created = False
            else:
                if detect_conflicts:
                    superseded = conflict_mod.find_conflict(conn, scope, value, tag_list, vector, model)
                new_id = self._insert(
                    conn,
                    scope,
                    key,
                    value,
                    tag_list,
                    origin,
                    now,
                    verified=superseded is not None,
                    pinned=False,
                    vector=vector,
                    model=model,
                )
                if superseded is not None:
                    self._archive_and_link(conn, new_id, superseded.id, now)
                created = True
        result: dict[str, Any] = {
            "saved": True,
            "created": created,
            "scope": scope,
            "key": key,
            "superseded": superseded.key if superseded else None,
            "embedded": vector is not None,
        }
        if superseded is not None:
            result["superseded_by_rule"] = superseded.rule
            result["similarity"] = superseded.similarity
        return result

    @staticmethod
    def _insert(
        conn: sqlite3.Connection,
        scope: str,
        key: str,
        value: str,
        tags: builtins.list[str],
        origin: str,
        now: int,
        verified: bool,
        pinned: bool,
        vector: bytes | None,
        model: str,
    ) -> int:
        cur = conn.execute(
            """INSERT INTO memories (scope, key, value, tags, pinned, archived, origin, verified_at,
                                     created_at, updated_at, embedding, embedding_model)
               VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)""",
            (
                scope,
                key,
                value,
                ",".join(tags),
                int(pinned),
                origin,
                now if verified else 0,
                now,
                now,
                vector,
                model if vector is not None else "",
            ),
        )
        assert cur.lastrowid is not None  # an INSERT always sets it
        return cur.lastrowid

    @staticmethod
    def _archive_and_link(conn: sqlite3.Connection, new_id: int, old_id: int, now: int) -> None:
        conn.execute("UPDATE memories SET archived = 1, pinned = 0, updated_at = ? WHERE id = ?", (now, old_id))
        conn.execute(
            "INSERT OR IGNORE INTO memory_links (from_id, rel, to_id, created_at) VALUES (?, 'supersedes', ?, ?)",
            (new_id, old_id, now),
        )

    @storage_errors
    def supersede(
        self,
        scope: str,
        old_key: str,
        new_key: str,
        value: str,
        tags: object = None,
        vector: bytes | None = None,
        model: str = "",
    ) -> dict[str, Any]:
        """Archive `old_key` and replace it by the new memory `new_key`, which inherits pin and origin."""
        scope, old_key, new_key = check_scope(scope), check_key(old_key), check_key(new_key)
        value = check_value(value)
        tag_list = normalize_tags(tags)
        if old_key == new_key:
            raise UsageError("the new key must differ from the old key (use save to update in place)")
        now = now_ms()
        with self.write() as conn:
            old = self._require(scope, old_key)
            if self._row(scope, new_key) is not None:
                raise ConflictError(f"memory {new_key!r} already exists in scope {scope!r}")
            new_id = self._insert(
                conn,
                scope,
                new_key,
                value,
                tag_list,
                old["origin"],
                now,
                verified=True,
                pinned=bool(old["pinned"]),
                vector=vector,
                model=model,
            )
            self._archive_and_link(conn, new_id, old["id"], now)
        return {"superseded": old_key, "by": new_key, "scope": scope, "pinned": bool(old["pinned"])}

    @storage_errors
    def delete(self, scope: str, key: str) -> dict[str, Any]:
        scope, key = check_scope(scope), check_key(key)
        with self.write() as conn:
            row = self._require(scope, key)
            links = conn.execute(
                "SELECT count(*) FROM memory_links WHERE from_id = ? OR to_id = ?", (row["id"], row["id"])
            ).fetchone()[0]
            conn.execute("DELETE FROM memories WHERE id = ?", (row["id"],))
        return {"deleted": True, "scope": scope, "key": key, "links_removed": links}

    @storage_errors
    def rename(self, scope: str, old_key: str, new_key: str) -> dict[str, Any]:
        scope, old_key, new_key = check_scope(scope), check_key(old_key), check_key(new_key)
        if old_key == new_key:
            raise UsageError("old and new key are the same")
        with self.write() as conn:
            row = self._require(scope, old_key)
            if self._row(scope, new_key) is not None:
                raise ConflictError(f"memory {new_key!r} already exists in scope {scope!r}")
            conn.execute("UPDATE memories SET key = ?, updated_at = ? WHERE id = ?", (new_key, now_ms(), row["id"]))
            links = conn.execute(
                "SELECT count(*) FROM memory_links WHERE from_id = ? OR to_id = ?", (row["id"], row["id"])
            ).fetchone()[0]
        return {"renamed": True, "scope": scope, "from": old_key, "to": new_key, "links": links}

    @storage_errors
    def verify(self, scope: str, key: str) -> dict[str, Any]:
        scope, key = check_scope(scope), check_key(key)
        now = now_ms()
        with self.write() as conn:
            row = self._require(scope, key)
            conn.execute("UPDATE memories SET verified_at = ? WHERE id = ?", (now, row["id"]))
        return {
            "verified": True,
            "scope": scope,
            "key": key,
            "verified_at": to_record(self._require(scope, key))["verified_at"],
        }

    @storage_errors
    def set_pinned(self, scope: str, key: str, pinned: bool) -> dict[str, Any]:
        """Pin (which also marks verified and brings an archived memory back) or unpin."""
        scope, key = check_scope(scope), check_key(key)
        with self.write() as conn:
            row = self._require(scope, key)
            if pinned:
                conn.execute(
                    "UPDATE memories SET pinned = 1, archived = 0, verified_at = ? WHERE id = ?", (now_ms(), row["id"])
                )
            else:
                conn.execute("UPDATE memories SET pinned = 0 WHERE id = ?", (row["id"],))
        return {"pinned": pinned, "scope": scope, "key": key, "changed": bool(row["pinned"]) != pinned}

    @storage_errors
    def link(self, scope: str, from_key: str, rel: str, to_key: str, to_scope: str | None = None) -> dict[str, Any]:
        scope, from_key, to_key = check_scope(scope), check_key(from_key), check_key(to_key)
        to_scope = check_scope(to_scope) if to_scope else scope
        rel = check_rel(rel)
        if (scope, from_key) == (to_scope, to_key):
            raise UsageError("a memory cannot link to itself")
        with self.write() as conn:
            src = self._require(scope, from_key)
            dst = self._require(to_scope, to_key)
            cur = conn.execute(
                "INSERT OR IGNORE INTO memory_links (from_id, rel, to_id, created_at) VALUES (?, ?, ?, ?)",
                (src["id"], rel, dst["id"], now_ms()),
            )
        return {
            "linked": True,
            "created": cur.rowcount == 1,
            "from": uri(scope, from_key),
            "rel": rel,
            "to": uri(to_scope, to_key),
        }

    @storage_errors
    def unlink(self, scope: str, from_key: str, rel: str, to_key: str, to_scope: str | None = None) -> dict[str, Any]:
        scope, from_key, to_key = check_scope(scope), check_key(from_key), check_key(to_key)
        to_scope = check_scope(to_scope) if to_scope else scope
        rel = check_rel(rel)
        with self.write() as conn:
            src = self._require(scope, from_key)
            dst = self._require(to_scope, to_key)
            cur = conn.execute(
                "DELETE FROM memory_links WHERE from_id = ? AND rel = ? AND to_id = ?", (src["id"], rel, dst["id"])
            )
            if cur.rowcount == 0:
                raise NotFoundError(f"no link {from_key!r} -{rel}-> {to_key!r}")
        return {"unlinked": True, "from": uri(scope, from_key), "rel": rel, "to": uri(to_scope, to_key)}

    # ----- graph ---------------------------------------------------------------

    @storage_errors
    def traverse(
        self,
        scope: str,
        key: str,
        depth: int = 1,
        direction: str = "both",
        rel: str | None = None,
        include_archived: bool = False,
    ) -> dict[str, Any]:
        """Breadth-first walk from a memory. Archived nodes are left out unless asked for."""
        scope, key = check_scope(scope), check_key(key)
        if direction not in ("out", "in", "both"):
            raise UsageError("direction must be out, in or both")
        if rel is not None:
            rel = check_rel(rel)
        depth = min(max(int(depth), 1), MAX_DEPTH)
        root = self._require(scope, key)
        seen = self._reachable(root["id"], depth, direction, rel, include_archived)
        nodes, edges = self._subgraph(seen, rel)
        return {
            "root": uri(scope, key),
            "depth": depth,
            "direction": direction,
            "rel": rel,
            "nodes": nodes,
            "edges": edges,
        }

    def _reachable(
        self, root: int, depth: int, direction: str, rel: str | None, include_archived: bool
    ) -> dict[int, int]:
        """Memory id -> its distance from `root`, up to `depth` links away."""
        seen: dict[int, int] = {root: 0}
        queue: deque[int] = deque([root])
        while queue:
            node = queue.popleft()
            if seen[node] >= depth:
                continue
            for other in self._neighbours(node, direction, rel, include_archived):
                if other not in seen:
                    seen[other] = seen[node] + 1
                    queue.append(other)
        return seen

    def _neighbours(self, node: int, direction: str, rel: str | None, include_archived: bool) -> builtins.list[int]:
        """The ids linked to `node` (its targets, its sources or both), sorted."""
        where = (" AND l.rel = ?" if rel else "") + ("" if include_archived else " AND m.archived = 0")
        args = (node, rel) if rel else (node,)
        neighbours: builtins.list[int] = []
        for side, (other, this) in (("out", ("to_id", "from_id")), ("in", ("from_id", "to_id"))):
            if direction in (side, "both"):
                neighbours += [
                    r[0]
                    for r in self.conn.execute(
                        f"SELECT l.{other} FROM memory_links l JOIN memories m ON m.id = l.{other} "
                        f"WHERE l.{this} = ?{where}",
                        args,
                    )
                ]
        return sorted(set(neighbours))

    def _subgraph(
        self, seen: dict[int, int], rel: str | None
    ) -> tuple[builtins.list[dict[str, Any]], builtins.list[dict[str, str]]]:
        """The nodes (with their depth) and the edges between them, both sorted."""
        ids = list(seen)
        marks = ",".join("?" * len(ids))
        rows = {
            r["id"]: r
            for r in self.conn.execute(
                f"SELECT id, scope, key, tags, pinned, archived FROM memories WHERE id IN ({marks})", ids
            )
        }
        nodes = sorted(
            (
                {
                    "uri": uri(rows[i]["scope"], rows[i]["key"]),
                    "scope": rows[i]["scope"],
                    "key": rows[i]["key"],
                    "tags": [t for t in rows[i]["tags"].split(",") if t],
                    "pinned": bool(rows[i]["pinned"]),
                    "archived": bool(rows[i]["archived"]),
                    "depth": d,
                }
                for i, d in seen.items()
            ),
            key=lambda n: (n["depth"], n["scope"], n["key"]),
        )
        edge_rows = self.conn.execute(
            f"SELECT from_id, rel, to_id FROM memory_links WHERE from_id IN ({marks}) AND to_id IN ({marks})"
            f"{' AND rel = ?' if rel else ''}",
            (*ids, *ids, *((rel,) if rel else ())),
        ).fetchall()
        edges = sorted(
            {
                (
                    uri(rows[e["from_id"]]["scope"], rows[e["from_id"]]["key"]),
                    uri(rows[e["to_id"]]["scope"], rows[e["to_id"]]["key"]),
                    e["rel"],
                )
                for e in edge_rows
            }
        )
        return nodes, [{"from": f, "to": t, "rel": r} for f, t, r in edges]

    # ----- search --------------------------------------------------------------

    @storage_errors
    def text_search(
        self,
        scope: str,
        match: str,
        limit: int,
        pinned_first: bool = True,
        candidates: int | None = None,
        older_pinned: bool = True,
    ) -> builtins.list[dict[str, Any]]:
        """BM25 full-text hits; each record gains `score` (higher is better) and `snippet`.

        Order: pinned first, then rank (BM25, column weights 3/1/2), then most recent
        update, then newest id, among the candidates: the CANDIDATES most recently
        created active matches of the scope (every match when there are fewer)
        plus every pinned match, so a very common word never makes FTS5 score
        tens of thousands of rows. `candidates` replaces CANDIDATES; with
        `older_pinned=False` the pinned matches count only among the candidates.
        """
        try:
            hits = self._ranked_ids(scope, match, limit, pinned_first, candidates or CANDIDATES, older_pinned)
        except sqlite3.OperationalError:
            return self._like_search(scope, match, limit)
        if not hits:
            return []
        from deployments.memory.query import snippet

        records = self.records_by_id([i for i, _ in hits])
        out = []
        for mem_id, rank in hits:
            rec = records[mem_id]
            rec["score"] = round(-rank, 6)
            rec["snippet"] = snippet(rec["value"], match)
            out.append(rec)
        return out

    @storage_errors
    def has_match(self, match: str) -> bool:
        """Whether any memory (any scope, archived too) matches: a cheap probe, no ranking."""
        return (
            self.conn.execute("SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT 1", (match,)).fetchone()
            is not None
        )

    def _ranked_ids(
        self, scope: str, match: str, limit: int, pinned_first: bool, candidates: int, older_pinned: bool
    ) -> builtins.list[tuple[int, float]]:
        scope_sql = "" if scope == ALL_SCOPES else " AND scope = ?"
        scope_args: tuple[str, ...] = () if scope == ALL_SCOPES else (scope,)
        counts = self.phrase_counts(match) if self.rank_counts else None
        rank_sql, rank_args = rank_expression("memories_fts", counts)
        # BM25 over the newest CANDIDATES active matches of the scope (all of them
        # when there are fewer; FTS5 walks its doclists newest first and stops there,
        # computing the rank of the rows it returns only) plus every older pinned match.
        rows = self.conn.execute(
            f"SELECT m.id, {rank_sql}, m.pinned, m.updated_at FROM memories_fts "
            "CROSS JOIN memories m INDEXED BY memories_search ON m.id = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND m.archived = 0{scope_sql.replace('scope', 'm.scope')} "
            "ORDER BY memories_fts.rowid DESC LIMIT ?",
            (*rank_args, match, *scope_args, candidates),
        ).fetchall()
        if not rows:
            return []
        hits = [(r[0], r[1], r[2] if pinned_first else 0, r[3]) for r in rows]
        if (
            pinned_first
            and older_pinned
            and len(rows) == candidates
            and (
                scope == ALL_SCOPES
                or self.conn.execute(
                    "SELECT 1 FROM memories WHERE scope = ? AND archived = 0 AND pinned = 1 AND id < ? LIMIT 1",
                    (scope, rows[-1][0]),
                ).fetchone()
            )
        ):
            older = self._older_pinned(match, rows[-1][0], counts, scope_sql, scope_args)
            hits += self._with_updated(older, scope_sql, scope_args, with_pinned=True)
        hits.sort(key=lambda h: (-h[2], h[1], -h[3], -h[0]))
        return [(h[0], h[1]) for h in hits[:limit]]

    def _older_pinned(
        self, match: str, below: int, counts: builtins.list[int] | None, scope_sql: str, scope_args: tuple[str, ...]
    ) -> builtins.list[tuple[int, float]]:
        """(id, BM25) of the active pinned matches with an id below `below`, scored as the main index scores them."""
        if counts is not None:
            # memories_pinned_fts holds the active pinned memories only: a few rows to match instead of
            # the whole posting list of a common word. mem_bm25 takes the main index's row and token
            # totals and counts, so each score is the one the main index gives that row (tested).
            rank_sql, rank_args = rank_expression("memories_pinned_fts", counts, fts_totals(self.conn))
            rows: builtins.list[tuple[int, float]] = self.conn.execute(
                f"SELECT rowid, {rank_sql} FROM memories_pinned_fts WHERE memories_pinned_fts MATCH ? AND rowid < ?",
                (*rank_args, match, below),
            ).fetchall()
            return rows
        # One walk over the older matches; FTS5 ranks only those that pass the filter
        # (`+rowid`: an IN list handed to FTS5 would restart the query once per value).
        older: builtins.list[tuple[int, float]] = self.conn.execute(
            "SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ? AND rowid < ? "
            f"AND +rowid IN (SELECT id FROM memories WHERE pinned = 1 AND archived = 0{scope_sql})",
            (match, below, *scope_args),
        ).fetchall()
        return older

    def phrase_counts(self, match: str) -> builtins.list[int]:
        """For each phrase of `match`, in FTS5's order, how many memories hold it (any scope, archived too).

        Exact up to RANK_COUNT_EXACT. Above, estimated from a sample: the matches in COUNT_WINDOWS windows
        spread evenly over the span of ids, together an eighth of it (a word's share is seldom even over
        time, so one end of the span is not a sample). A prefix longer than the longest prefix index is
        counted exactly: each window would merge its words' lists again. Phrases of the excluded part
        count 0: a row that matches holds none.
        """
        excluded_from = match.find(" NOT (")
        span: tuple[int, int] | None = None
        out: builtins.list[int] = []
        count_sql = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
        for found in _PHRASE.finditer(match):
            phrase = found.group()
            if 0 <= excluded_from < found.start():
                out.append(0)
                continue
            count = self.conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
                (phrase, RANK_COUNT_EXACT),
            ).fetchone()[0]
            if count < RANK_COUNT_EXACT:
                out.append(int(count))
                continue
            last_word = phrase.rstrip("*").strip('"').split()[-1:] or [""]
            if phrase.endswith("*") and len(last_word[0]) > LONGEST_PREFIX_INDEX:
                out.append(int(self.conn.execute(count_sql, (phrase,)).fetchone()[0]))
                continue
            if span is None:
                # Two subqueries: min() and max() in one SELECT would scan the table instead of two seeks.
                lo, hi = self.conn.execute(
                    "SELECT (SELECT min(id) FROM memories), (SELECT max(id) FROM memories)"
                ).fetchone()
                span = (int(lo), int(hi))
            lo, width = span[0], span[1] - span[0] + 1
            window = max(1, width // (8 * COUNT_WINDOWS))
            sampled = 0
            for w in range(COUNT_WINDOWS):
                start = lo + width * w // COUNT_WINDOWS
                sampled += self.conn.execute(
                    f"{count_sql} AND rowid BETWEEN ? AND ?", (phrase, start, start + window - 1)
                ).fetchone()[0]
            out.append(max(int(count), round(sampled * width / (window * COUNT_WINDOWS))))
        return out

    def _with_updated(
        self,
        ranked: builtins.list[tuple[int, float]],
        scope_sql: str = "",
        scope_args: tuple[str, ...] = (),
        with_pinned: bool = False,
    ) -> builtins.list[tuple[Any, ...]]:
        """(id, rank, [pinned,] updated_at) of the active rows among `ranked`, filtered by scope."""
        if not ranked:
            return []
        rank_of: dict[int, float] = dict(ranked)
        keep: builtins.list[tuple[Any, ...]] = []
        ids = list(rank_of)
        for start in range(0, len(ids), 900):
            chunk = ids[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                # `+` keeps the planner on the id lookups instead of scanning the scope's index.
                f"SELECT id, pinned, updated_at FROM memories WHERE id IN ({marks}) AND +archived = 0"
                f"{scope_sql.replace('scope', '+scope')}",
                (*chunk, *scope_args),
            )
            keep += [(r[0], rank_of[r[0]], r[1], r[2]) if with_pinned else (r[0], rank_of[r[0]], r[2]) for r in rows]
        return keep

    def _like_search(self, scope: str, match: str, limit: int) -> builtins.list[dict[str, Any]]:
        """Last resort when FTS5 rejects an expression: substring match on the words, score 0."""
        from deployments.memory.query import words

        terms = [w for phrase in re.findall(r'"((?:[^"]|"")*)"', match) for w in words(phrase)]
        if not terms:
            return []
        where = ["m.archived = 0"] + ["(m.key || ' ' || m.value || ' ' || m.tags) LIKE ?"] * len(terms)
        params: builtins.list[Any] = [f"%{t}%" for t in terms]
        if scope != ALL_SCOPES:
            where.append("m.scope = ?")
            params.append(scope)
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM memories m WHERE {' AND '.join(where)} "
            "ORDER BY m.pinned DESC, m.updated_at DESC, m.id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [dict(to_record(r), id=r["id"], score=0.0, snippet=r["value"][:120]) for r in rows]

    @storage_errors
    def records_by_id(self, ids: builtins.list[int]) -> dict[int, dict[str, Any]]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"SELECT {COLUMNS} FROM memories m WHERE m.id IN ({marks})", ids).fetchall()
        return {r["id"]: dict(to_record(r), id=r["id"]) for r in rows}

    # ----- embeddings backfill -----------------------------------------------------

    @storage_errors
    def needing_embedding(self, model: str, force: bool) -> builtins.list[int]:
        params: tuple[str, ...]
        if force:
            sql, params = "SELECT id FROM memories ORDER BY id", ()
        else:
            sql, params = (
                "SELECT id FROM memories WHERE embedding IS NULL OR embedding_model != ? ORDER BY id",
                (model,),
            )
        return [r[0] for r in self.conn.execute(sql, params)]

    @storage_errors
    def texts_for(self, ids: builtins.list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"SELECT id, value, tags FROM memories WHERE id IN ({marks})", ids)
        return {r["id"]: embedding_text(r["value"], r["tags"].split(",")) for r in rows}

    @storage_errors
    def set_embeddings(self, items: builtins.list[tuple[int, bytes]], model: str) -> None:
        """Store vectors without touching updated_at (re-embedding is not an edit)."""
        with self.write() as conn:
            conn.executemany(
                "UPDATE memories SET embedding = ?, embedding_model = ? WHERE id = ?",
                [(blob, model, i) for i, blob in items],
            )

    @storage_errors
    def fts_integrity(self) -> bool:
        try:
            self.conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError:
            return False
        return True


def install_rank(conn: sqlite3.Connection) -> bool:
    """Add mem_bm25 (the compiled _rank module) to `conn`; False when it is not built or does not fit."""
    # The handle is read from CPython's Connection object, whose first field it is in 3.8-3.14.
    if sys.implementation.name != "cpython" or not (3, 8) <= sys.version_info[:2] <= (3, 14):
        return False
    try:
        import _sqlite3

        from deployments.memory import _rank
    except ImportError:
        return False
    try:
        main = next(r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main")
        # The module reads the sqlite3 handle out of the Connection object: the file SQLite names
        # for that handle must be this connection's before anything is registered on it.
        if _rank.filename(conn, sqlite3.Connection, _sqlite3.__file__) != main:
            return False
        return bool(_rank.register(conn, sqlite3.Connection, _sqlite3.__file__))
    except (AttributeError, OSError, TypeError, ValueError, StopIteration, sqlite3.Error):  # no __file__: built in
        return False


def rank_expression(
    table: str, counts: list[int] | None, totals: tuple[int, int] = (-1, -1)
) -> tuple[str, tuple[float, ...]]:
    """The SQL of the BM25 column and its arguments, before the MATCH's: FTS5's `rank` (the schema's
    bm25 with BM25_WEIGHTS), or mem_bm25 with the same weights and the given counts."""
    if counts is None:
        return "rank", ()
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    marks = ", ?" * len(counts)
    return f"mem_bm25({table}, {len(BM25_WEIGHTS)}, {weights}, ?, ?{marks})", (*totals, *counts)


def fts_totals(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens of all columns) of the main full-text index: FTS5's averages record, as bm25() reads it."""
    row = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
    values = _varints(bytes(row[0])) if row else []
    return (values[0], sum(values[1:])) if values else (0, 0)


def _varints(data: bytes) -> list[int]:
    """SQLite's variable-length integers (big-endian, 7 bits a byte, the 9th byte whole)."""
    out, i = [], 0
    while i < len(data):
        value = 0
        for k in range(9):
            byte = data[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def embedding_text(value: str, tags: list[str]) -> str:
    """What is sent to the embeddings endpoint for a memory."""
    tags = [t for t in tags if t]
    return value if not tags else f"{value}\n{', '.join(tags)}"


def check_rel(rel: object) -> str:
    if not isinstance(rel, str) or not REL_PATTERN.match(rel):
        raise UsageError("rel must be 1-64 characters of letters, digits, '_', '.', ':' or '-'")
    return rel


def check_limit(limit: object, maximum: int = 10_000) -> int:
    try:
        value: int = int(limit)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise UsageError(f"limit must be an integer, got {limit!r}") from None
    if not 1 <= value <= maximum:
        raise UsageError(f"limit must be between 1 and {maximum}")
    return value
