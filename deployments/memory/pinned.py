"""The vectors of the pinned memories, held in memory per process for the HNSW path of hybrid search.

Pinned matches are scored exactly on every search that uses the index (they
come first, whatever the index proposes). Reading them from SQLite costs a row
lookup each, every query: ~10 ms of CPU for the 2000 pinned memories of the 1M
bench store. Here they are one float32 matrix per (database, model, dimension),
read again only when the store's `pinned_stamp` has changed: triggers (schema
V8) give it a fresh random value on every insert or delete of a pinned row and
every change to a pinned row's pin, archive flag, scope or vector, so saves of
unpinned memories leave the matrix in place.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from deployments.memory.records import ALL_SCOPES


@dataclass(frozen=True)
class Pinned:
    """The active pinned rows with a vector of one model: ids, scopes and vectors, as of `stamp`."""

    stamp: tuple[int, int]
    ids: Any
    scopes: Any
    matrix: Any


_LOCK = threading.Lock()
_HELD: dict[tuple[str, str, int], Pinned] = {}


def stamp(conn: Any) -> tuple[int, int]:
    """(store_id, pinned_stamp): changes whenever the pinned set or a pinned vector does."""
    values = dict(conn.execute("SELECT name, value FROM mem_meta WHERE name IN ('store_id', 'pinned_stamp')"))
    return int(values.get("store_id", 0)), int(values.get("pinned_stamp", 0))


def current(db_path: str, conn: Any, model: str, dim_bytes: int) -> Pinned:
    """The pinned vectors of `model`: the held copy when its stamp is the store's, else read from SQLite."""
    key = (db_path, model, dim_bytes)
    now = stamp(conn)
    held = _HELD.get(key)
    if held is not None and held.stamp == now:
        return held
    fresh = _read(conn, model, dim_bytes, now)
    with _LOCK:
        _HELD[key] = fresh
    return fresh


def _read(conn: Any, model: str, dim_bytes: int, now: tuple[int, int]) -> Pinned:
    import numpy as np

    # The stamp is read first: a change landing in between leaves a held copy whose stamp is
    # already old, so the next search reads again.
    rows = conn.execute(
        "SELECT id, scope, embedding FROM memories WHERE pinned = 1 AND archived = 0 AND embedding_model = ? "
        "AND length(embedding) = ?",
        (model, dim_bytes),
    ).fetchall()
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    scopes = np.array([r[1] for r in rows], dtype=object)
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim_bytes // 4)
    return Pinned(stamp=now, ids=ids, scopes=scopes, matrix=matrix)


def hits(db_path: str, conn: Any, model: str, query: Any, scope: str, min_sim: float) -> list[tuple[int, float]]:
    """Exact (memory id, cosine) of the scope's pinned memories with cosine >= min_sim: best first, newest id first."""
    import numpy as np

    held = current(db_path, conn, model, len(query) * 4)
    if not len(held.ids):
        return []
    matrix, ids = held.matrix, held.ids
    if scope != ALL_SCOPES:
        in_scope = held.scopes == scope
        matrix, ids = matrix[in_scope], ids[in_scope]
    sims = matrix @ query
    keep = np.nonzero(sims >= min_sim)[0]
    order = keep[np.lexsort((-ids[keep], -sims[keep]))]
    return [(int(ids[i]), float(sims[i])) for i in order]
