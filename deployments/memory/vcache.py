"""A memory-mapped copy of the vectors of one embedding model, for hybrid search.

Reading every vector out of SQLite costs tens of milliseconds per 10k rows, on
every query. The cache keeps, beside the database (`<db>.vectors/`, mode 0700),
one float32 matrix per (model, dimension) plus the id, pinned flag and scope of
each row, stamped with the store's `vector_generation` counter. Triggers bump
that counter on every change to vectors, pins, scopes or archiving, so a stale
cache is detected with one SELECT and rebuilt from SQLite on the next search.
Files are written under fresh names and published by atomically replacing the
small metadata file; a reader that loses a race with a rebuild falls back to
reading SQLite.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from typing import Any

MIN_ROWS = 2000  # below this, reading SQLite directly is as fast as the cache


def _folder(db_path: str) -> str:
    return db_path + ".vectors"


def _stem(model: str, dim_bytes: int) -> str:
    return hashlib.sha1(f"{model}\0{dim_bytes}".encode()).hexdigest()[:16]


def generation(conn: Any) -> int:
    row = conn.execute("SELECT value FROM mem_meta WHERE name = 'vector_generation'").fetchone()
    return int(row[0]) if row else -1


def load(db_path: str, conn: Any, model: str, dim_bytes: int) -> tuple[Any, Any, list[str]] | None:
    """(matrix, rows[id, pinned, scope_code], scopes) when a fresh cache exists, else None."""
    import numpy as np

    stem = _stem(model, dim_bytes)
    meta_path = os.path.join(_folder(db_path), f"{stem}.json")
    try:
        with open(meta_path, encoding="utf-8") as fh:
            meta = json.load(fh)
        if meta["generation"] != generation(conn) or meta["model"] != model or meta["dim_bytes"] != dim_bytes:
            return None
        base = os.path.join(_folder(db_path), f"{stem}-{meta['token']}")
        matrix = np.load(base + "-matrix.npy", mmap_mode="r")
        rows = np.load(base + "-rows.npy")
    except (OSError, ValueError, KeyError):
        return None
    if matrix.shape[0] != rows.shape[0] or matrix.shape[0] != meta["n"]:
        return None
    return matrix, rows, meta["scopes"]


def build(db_path: str, conn: Any, model: str, dim_bytes: int) -> tuple[Any, Any, list[str]]:
    """Read the vectors of `model` from SQLite; write the cache when the set is large."""
    gen = generation(conn)
    matrix, rows, scopes = read(conn, model, dim_bytes)
    if len(rows) >= MIN_ROWS:
        try:
            _write(db_path, model, dim_bytes, gen, matrix, rows, scopes)
        except OSError:
            pass  # the cache is an optimisation: a read-only folder only costs speed
    return matrix, rows, scopes


def read(conn: Any, model: str, dim_bytes: int) -> tuple[Any, Any, list[str]]:
    """(matrix, rows[id, pinned, scope_code], scopes) of the active rows with a vector of `model`, from SQLite."""
    import numpy as np

    cur = conn.execute(
        "SELECT id, pinned, scope, embedding FROM memories WHERE archived = 0 AND embedding_model = ? "
        "AND length(embedding) = ?",
        (model, dim_bytes),
    )
    cur.row_factory = None
    records = cur.fetchall()
    scopes = sorted({r[2] for r in records})
    codes = {s: i for i, s in enumerate(scopes)}
    rows = np.array([(r[0], r[1], codes[r[2]]) for r in records], dtype=np.int64).reshape(len(records), 3)
    matrix = np.frombuffer(b"".join(r[3] for r in records), dtype="<f4").reshape(len(records), dim_bytes // 4)
    return matrix, rows, scopes


def private_folder(db_path: str) -> str:
    """`<db>.vectors/`, created 0700 when missing: the home of the flat cache and of the HNSW index."""
    folder = _folder(db_path)
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
    return folder


def _write(db_path: str, model: str, dim_bytes: int, gen: int, matrix: Any, rows: Any, scopes: list[str]) -> None:
    import numpy as np

    folder = private_folder(db_path)
    stem = _stem(model, dim_bytes)
    token = secrets.token_hex(6)
    base = os.path.join(folder, f"{stem}-{token}")
    for suffix, array in (("-matrix.npy", matrix), ("-rows.npy", rows)):
        fd = os.open(base + suffix, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, array)
    meta = {
        "generation": gen,
        "model": model,
        "dim_bytes": dim_bytes,
        "n": int(matrix.shape[0]),
        "scopes": scopes,
        "token": token,
    }
    tmp = os.path.join(folder, f"{stem}.{token}.json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(meta, fh)
    os.replace(tmp, os.path.join(folder, f"{stem}.json"))
    for name in os.listdir(folder):
        if name.startswith(f"{stem}-") and not name.startswith(f"{stem}-{token}-"):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
