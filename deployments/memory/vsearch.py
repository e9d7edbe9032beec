"""The vector half of hybrid search: exact flat scan for small sets, HNSW candidates above ann.THRESHOLD.

Both paths give the same list shape and order: pinned matches first, then by
cosine, then newest id; only active rows of the scope with a vector of the
query's model and dimension, cosine >= `min_sim`. On the HNSW path the pinned
matches are scored exactly (their vectors are held in memory: pinned.py), the
index proposes the others, and every proposed id is re-read from
SQLite (active, unpinned, in scope) and re-scored exactly, so a stale or
approximate index entry can change which memories are found, never what a
result says or whether a deleted or archived memory appears.
"""

from __future__ import annotations

import re
from typing import Any

from deployments.memory import ann, pinned, vcache
from deployments.memory.records import ALL_SCOPES

MAX_CANDIDATES = 8192  # beyond this many index candidates, scan the scope's rows exactly
APPROX_MARGIN = 0.03  # i8 index similarities may be this far below the exact cosine


def vector_hits(
    db_path: str, conn: Any, model: str, qvec: bytes, scope: str, depth: int, min_sim: float
) -> list[tuple[int, float]]:
    """Best `depth` (memory id, cosine) pairs for the packed unit vector `qvec`."""
    import numpy as np

    query = np.frombuffer(qvec, dtype="<f4")
    index = ann.load(db_path, conn, model, len(qvec))
    if index is None:
        cached = vcache.load(db_path, conn, model, len(qvec))
        if cached is None:
            hwm = ann.high_water(conn)
            cached = vcache.read(conn, model, len(qvec))
            if len(cached[1]) >= ann.THRESHOLD:
                index = ann.build(db_path, conn, model, len(qvec), hwm, cached[1][:, 0], cached[0])
            else:
                cached = vcache.build(db_path, conn, model, len(qvec))
        if index is None:
            return _flat(query, *cached, scope, depth, min_sim)
    return _indexed(db_path, conn, index, query, model, scope, depth, min_sim)


def _flat(
    query: Any, matrix: Any, rows: Any, scopes: list[str], scope: str, depth: int, min_sim: float
) -> list[tuple[int, float]]:
    import numpy as np

    if not len(rows):
        return []
    sims = matrix @ query
    mask = sims >= min_sim
    if scope != ALL_SCOPES:
        if scope not in scopes:
            return []
        mask &= rows[:, 2] == scopes.index(scope)
    picked = np.nonzero(mask)[0]
    order = picked[np.lexsort((-rows[picked, 0], -sims[picked], -rows[picked, 1]))][:depth]
    return [(int(rows[i, 0]), float(sims[i])) for i in order]


def _indexed(
    db_path: str, conn: Any, index: ann.Index, query: Any, model: str, scope: str, depth: int, min_sim: float
) -> list[tuple[int, float]]:
    scope_sql, scope_args = ("", ()) if scope == ALL_SCOPES else (" AND scope = ?", (scope,))
    dim_bytes = len(query) * 4
    pinned_hits = pinned.hits(db_path, conn, model, query, scope, min_sim)
    rest: list[tuple[int, float]] = []
    count = max(4 * depth, 64)
    while True:
        found = index.candidates(query, count)
        ids = [i for i, s in found if s >= min_sim - APPROX_MARGIN]
        rest = _scored(
            conn, query, "pinned = 0 AND archived = 0" + scope_sql, scope_args, model, dim_bytes, min_sim, ids
        )
        if len(rest) >= depth or len(ids) < len(found) or len(found) < count or count >= index.exhausted_at:
            break
        if count >= MAX_CANDIDATES:
            # A scope holding a small share of the vectors: its rows are read and scored exactly.
            rest = _scored(
                conn, query, "pinned = 0 AND archived = 0" + scope_sql, scope_args, model, dim_bytes, min_sim
            )
            break
        count *= 4
    return (pinned_hits + rest)[:depth]


def _scored(
    conn: Any,
    query: Any,
    where: str,
    args: tuple[str, ...],
    model: str,
    dim_bytes: int,
    min_sim: float,
    ids: list[int] | None = None,
) -> list[tuple[int, float]]:
    """Exact cosine of the rows matching `where` (among `ids` when given), >= min_sim, best first, newest id first."""
    import numpy as np

    if ids is not None and not ids:
        return []
    id_sql = ""
    if ids is not None:
        # `+column`: the planner must look the ids up, not walk the scope's part of the listing index.
        where = re.sub(r"\b(pinned|archived|scope) ", r"+\1 ", where)
        id_sql = f" AND id IN ({','.join('?' * len(ids))})"
    rows = conn.execute(
        f"SELECT id, embedding FROM memories WHERE {where}{id_sql} AND embedding_model = ? AND length(embedding) = ?",
        (*args, *(ids or ()), model, dim_bytes),
    ).fetchall()
    if not rows:
        return []
    sims = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim_bytes // 4) @ query
    hits = [(int(r[0]), float(s)) for r, s in zip(rows, sims, strict=True) if s >= min_sim]
    hits.sort(key=lambda h: (-h[1], -h[0]))
    return hits
