"""An HNSW index (usearch) of one embedding model's vectors, kept beside the database.

The exact flat scan (vcache.py) is linear in the number of vectors; above
THRESHOLD vectors hybrid search asks this index for candidates instead (README,
"Vector index"). Files in `<db>.vectors/` (folder 0700, files 0600):

- `<stem>-<token>.usearch`: the usearch HNSW graph and the vectors (f16), keyed
  by memory id; it holds the active memories with a vector of this model and
  dimension;
- `<stem>.hnsw.json`: what the file holds (model, dimension, `store_id`, its
  size and count) and `hwm`, the last `vector_log.seq` it includes. Written last
  and published by an atomic rename, so the published index is always whole.

Staying in step: triggers append the id of every memory whose indexed vector
changes (saved, replaced, archived, brought back, deleted) to `vector_log`, in
the writing transaction. An opened index reads the entries after its `hwm`: the
pending ids. Their index entries are ignored and their current vectors, read
from SQLite, are searched exactly, so a save is found at once and a deleted
memory never comes back, whoever wrote it and whether or not a process died
between the store write and the index write. When more than FOLD_AT ids are
pending they are folded into a new file (loaded, removed, re-added, saved) and
the meta gets the new `hwm`. A missing or unreadable file, a file of another
size, a meta of another store, a `hwm` ahead of the store's log (an older copy
of the database) or behind its pruned part: the index is rebuilt from SQLite.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

THRESHOLD = 20_000  # vectors; below it the exact flat scan serves (README: the measured crossover)
FOLD_AT = 1000  # pending ids before they are folded into the file
REBUILD_SHARE = 0.2  # fold would leave more tombstones than this share: rebuild instead
# Chosen on the bench's vectors (README, "Vector index"): recall@10 of the search's vector list
# >= 0.95 against the exact scan. i8 builds twice as fast as f16 and is a quarter of f32's size;
# the index only picks candidates, their scores are recomputed exactly from SQLite.
CONNECTIVITY = 24  # HNSW M: graph edges per node
EXPANSION_ADD = 64  # ef_construction
EXPANSION_SEARCH = 512  # ef at query time: short queries sit far from every memory, HNSW needs a wide beam
DTYPE = "i8"
FORMAT = 1


def folder(db_path: str) -> str:
    from deployments.memory.vcache import _folder

    return _folder(db_path)


def _stem(model: str, dim_bytes: int) -> str:
    return "hnsw-" + hashlib.sha1(f"{model}\0{dim_bytes}".encode()).hexdigest()[:16]


def _meta_path(db_path: str, model: str, dim_bytes: int) -> str:
    return os.path.join(folder(db_path), f"{_stem(model, dim_bytes)}.hnsw.json")


def _mem_meta(conn: Any, name: str) -> int:
    row = conn.execute("SELECT value FROM mem_meta WHERE name = ?", (name,)).fetchone()
    return int(row[0]) if row else 0


def high_water(conn: Any) -> int:
    """The last `vector_log.seq` ever assigned (0 when none): read before the rows an index is built from."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'").fetchone()
    return int(row[0]) if row else 0


@dataclass
class Index:
    """A published index and the changes it has not seen (exact, from SQLite)."""

    view: Any
    meta: dict[str, Any]
    seen: int  # the log position `pending` was read up to
    pending: set[int] = field(default_factory=set)
    pending_ids: Any = None
    pending_matrix: Any = None

    def candidates(self, query: Any, count: int) -> list[tuple[int, float]]:
        """Up to `count` (memory id, similarity) pairs, best first: index hits not pending, plus pending vectors."""
        hits: list[tuple[int, float]] = []
        if len(self.view):
            found = self.view.search(query, count + len(self.pending), threads=1)
            hits = [
                (int(k), 1.0 - float(d))
                for k, d in zip(found.keys, found.distances, strict=True)
                if int(k) not in self.pending
            ]
        if self.pending_ids is not None and len(self.pending_ids):
            sims = self.pending_matrix @ query
            hits += [(int(i), float(s)) for i, s in zip(self.pending_ids, sims, strict=True)]
        hits.sort(key=lambda h: -h[1])
        return hits[:count]

    @property
    def exhausted_at(self) -> int:
        """How many candidates exist at most (asking for more returns no more)."""
        return len(self.view) + len(self.pending)


_LOCK = threading.Lock()
_OPEN: dict[str, Index] = {}  # meta path -> the index this process has open


def load(db_path: str, conn: Any, model: str, dim_bytes: int) -> Index | None:
    """The published index of (model, dimension), caught up with the log; None when there is none or it is unusable.

    Unusable files are deleted, so the caller rebuilds from SQLite.
    """
    meta_path = _meta_path(db_path, model, dim_bytes)
    with _LOCK:
        try:
            with open(meta_path, encoding="utf-8") as fh:
                meta = json.load(fh)
        except (OSError, ValueError):
            _OPEN.pop(meta_path, None)
            if os.path.exists(meta_path):
                _discard(meta_path)
            return None
        index = _OPEN.get(meta_path)
        if index is None or index.meta.get("token") != meta.get("token"):
            index = _open(db_path, conn, meta, model, dim_bytes)
            if index is None:
                _OPEN.pop(meta_path, None)
                _discard(meta_path)
                return None
        _catch_up(conn, index, dim_bytes)
        if len(index.pending) > FOLD_AT:
            index = _fold(db_path, conn, index, model, dim_bytes)
        _OPEN[meta_path] = index
        return index


def _open(db_path: str, conn: Any, meta: dict[str, Any], model: str, dim_bytes: int) -> Index | None:
    from usearch.index import Index as Usearch

    try:
        valid = (
            meta["format"] == FORMAT
            and meta["model"] == model
            and meta["dim_bytes"] == dim_bytes
            and meta["store_id"] == _mem_meta(conn, "store_id")
            and _mem_meta(conn, "vector_log_floor") <= meta["hwm"] <= high_water(conn)
        )
        path = os.path.join(folder(db_path), f"{_stem(model, dim_bytes)}-{meta['token']}.usearch")
        if not valid or os.path.getsize(path) != meta["bytes"]:
            return None
        view = Usearch.restore(path, view=True)
    except (OSError, KeyError, TypeError, ValueError, RuntimeError):
        return None
    if view is None or view.ndim * 4 != dim_bytes or len(view) != meta["count"]:
        return None
    view.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # usearch has the setter; its typing does not
    return Index(view=view, meta=meta, seen=meta["hwm"])


def _catch_up(conn: Any, index: Index, dim_bytes: int) -> None:
    """Read the log entries after what `index` has seen; re-read the current vectors of all pending ids."""
    top = high_water(conn)
    if top == index.seen:
        return
    new = {r[0] for r in conn.execute("SELECT memory_id FROM vector_log WHERE seq > ?", (index.seen,))}
    index.pending |= new
    index.seen = top
    index.pending_ids, index.pending_matrix = _vectors(conn, sorted(index.pending), index.meta["model"], dim_bytes)


def _vectors(conn: Any, ids: list[int], model: str, dim_bytes: int) -> tuple[Any, Any]:
    """(ids, matrix) of those of `ids` that belong in the index: active, with a vector of the model."""
    import numpy as np

    found: list[tuple[int, bytes]] = []
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        found += conn.execute(
            f"SELECT id, embedding FROM memories WHERE id IN ({','.join('?' * len(chunk))}) AND archived = 0 "
            "AND embedding_model = ? AND length(embedding) = ?",
            (*chunk, model, dim_bytes),
        ).fetchall()
    keys = np.array([r[0] for r in found], dtype=np.uint64)
    matrix = np.frombuffer(b"".join(r[1] for r in found), dtype="<f4").reshape(len(found), dim_bytes // 4)
    return keys, matrix


def build(db_path: str, conn: Any, model: str, dim_bytes: int, hwm: int, ids: Any, matrix: Any) -> Index:
    """Index `matrix` (rows of memory `ids`, read after the log stood at `hwm`) and publish it."""
    from usearch.index import Index as Usearch

    view = Usearch(
        ndim=dim_bytes // 4,
        metric="cos",
        dtype=DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
    if len(ids):
        view.add(ids.astype("uint64"), matrix, threads=0)
    return _publish(db_path, conn, model, dim_bytes, hwm, view)


def _fold(db_path: str, conn: Any, index: Index, model: str, dim_bytes: int) -> Index:
    """Write the pending changes into a new file (or rebuild, when many entries would be tombstones)."""
    from usearch.index import Index as Usearch

    from deployments.memory import vcache

    stale = [i for i in index.pending if index.view.contains(i)]
    if len(stale) > REBUILD_SHARE * max(1, len(index.view)):
        hwm = high_water(conn)
        matrix, rows, _ = vcache.read(conn, model, dim_bytes)
        return build(db_path, conn, model, dim_bytes, hwm, rows[:, 0], matrix)
    path = os.path.join(folder(db_path), f"{_stem(model, dim_bytes)}-{index.meta['token']}.usearch")
    writable = Usearch.restore(path)
    if writable is None:
        raise ValueError(f"{path} is not a usearch index")
    if stale:
        writable.remove(stale)
    if len(index.pending_ids):
        writable.add(index.pending_ids, index.pending_matrix, threads=0)
    return _publish(db_path, conn, model, dim_bytes, index.seen, writable)


def _publish(db_path: str, conn: Any, model: str, dim_bytes: int, hwm: int, index: Any) -> Index:
    """Save `index` under a fresh name, then point the meta at it; prune the log; view the saved file."""
    from usearch.index import Index as Usearch

    from deployments.memory.vcache import private_folder

    base = private_folder(db_path)
    stem = _stem(model, dim_bytes)
    token = secrets.token_hex(6)
    path = os.path.join(base, f"{stem}-{token}.usearch")
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # private before usearch writes it
    index.save(path)
    meta = {
        "format": FORMAT,
        "model": model,
        "dim_bytes": dim_bytes,
        "store_id": _mem_meta(conn, "store_id"),
        "hwm": hwm,
        "count": len(index),
        "bytes": os.path.getsize(path),
        "token": token,
        "connectivity": CONNECTIVITY,
        "expansion_add": EXPANSION_ADD,
        "dtype": DTYPE,
    }
    meta_path = _meta_path(db_path, model, dim_bytes)
    tmp = f"{meta_path}.{token}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(meta, fh)
    os.replace(tmp, meta_path)
    for name in os.listdir(base):
        if name.startswith(f"{stem}-") and name != f"{stem}-{token}.usearch":
            _unlink(os.path.join(base, name))
    _prune(conn, base)
    view = Usearch.restore(path, view=True)
    if view is None:
        raise ValueError(f"{path} is not a usearch index")
    view.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]
    fresh = Index(view=view, meta=meta, seen=hwm)
    _OPEN[meta_path] = fresh
    return fresh


def _prune(conn: Any, base: str) -> None:
    """Drop the log entries every published index has seen; best effort (a busy store keeps them)."""
    import sqlite3

    hwms = []
    for name in os.listdir(base):
        if name.endswith(".hnsw.json"):
            try:
                with open(os.path.join(base, name), encoding="utf-8") as fh:
                    hwms.append(int(json.load(fh)["hwm"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue
    if not hwms:
        return
    floor = min(hwms)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM vector_log WHERE seq <= ?", (floor,))
        conn.execute("UPDATE mem_meta SET value = max(value, ?) WHERE name = 'vector_log_floor'", (floor,))
        conn.execute("COMMIT")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def _discard(meta_path: str) -> None:
    _unlink(meta_path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
