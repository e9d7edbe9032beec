"""The vector half of hybrid search on bench/memory_scale.py's cached stores: pinned vectors held in memory
(pinned.py) against reading them from SQLite on every query (the method before), in the same run.

Both methods alternate twice over the same queries; the searching thread's CPU time is reported, with the
whole hybrid search (HTTP embedding round trip included) and the text half alone, and whether both methods
give the same pinned lists. Needs the store and its HNSW index (run bench/memory_scale.py once first).

Usage: .venv/bin/python bench/memory_pinned.py [--size 1000000] [--queries 100]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.memory import DIM, make_query, summary, timed  # noqa: E402
from bench.memory_corpus import scale_corpus  # noqa: E402
from bench.memory_scale import MIN_SIM, MODEL, qvec, store_path  # noqa: E402
from deployments.memory import pinned, vsearch  # noqa: E402
from deployments.memory.config import load_settings  # noqa: E402
from deployments.memory.service import Memory  # noqa: E402
from tests.deployments.memory.embedserver import EmbeddingServer  # noqa: E402

HELD = pinned.hits


def from_sqlite(db_path: str, conn: Any, model: str, query: Any, scope: str, min_sim: float) -> list[tuple[int, float]]:
    """The method before: every pinned row of the scope read from SQLite and scored, on every query."""
    where, args = (
        ("pinned = 1 AND archived = 0", ()) if scope == "*" else ("pinned = 1 AND archived = 0 AND scope = ?", (scope,))
    )
    return vsearch._scored(conn, query, where, args, model, len(query) * 4, min_sim)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    paragraphs = scale_corpus(args.size + 1000)
    rng = random.Random(args.size)
    queries = [make_query(paragraphs[rng.randrange(args.size)], rng) for _ in range(args.queries)]
    path = store_path(args.size)
    cpu = time.thread_time
    res: dict[str, Any] = {}
    with EmbeddingServer("ok", dim=DIM) as server:
        env = {"MEM_DB": path, "MEM_EMBEDDING_URL": server.base_url, "MEM_EMBEDDING_MODEL": MODEL}
        mem = Memory(load_settings(dict(env, MEM_EMBED_TIMEOUT="10s")), warn=print)
        conn = mem.store.conn
        vectors = [qvec(q) for q in queries]
        timed(lambda q: mem.search(q, 10), queries[:10])
        for method, fn in (("held", HELD), ("sqlite", from_sqlite), ("held", HELD), ("sqlite", from_sqlite)):
            pinned.hits = fn  # type: ignore[assignment]
            vec = timed(
                lambda v: vsearch.vector_hits(path, conn, MODEL, v.tobytes(), "user", 30, MIN_SIM), vectors, cpu
            )
            res.setdefault(f"vector_half_{method}", []).extend(vec)
            res.setdefault(f"hybrid_cpu_{method}", []).extend(timed(lambda q: mem.search(q, 10), queries, cpu))
        pinned.hits = HELD
        same = all(
            HELD(path, conn, MODEL, v, "user", MIN_SIM) == from_sqlite(path, conn, MODEL, v, "user", MIN_SIM)
            for v in vectors
        )
        text_half = summary(timed(lambda q: mem._text_hits("user", q, 30), queries, cpu))
        n_pinned = len(pinned.current(path, conn, MODEL, DIM * 4).ids)
        mem.store.close()
    print(f"mem vector half at {args.size} memories, {n_pinned} pinned; ms of the searching thread's CPU, p50 / p99")
    for name in ("vector_half_held", "vector_half_sqlite", "hybrid_cpu_held", "hybrid_cpu_sqlite"):
        s = summary(res[name])
        print(f"  {name:<20} {s['p50']:8.2f} / {s['p99']:8.2f}  (n={s['n']})")
    print(f"  {'text_half (depth 30)':<20} {text_half['p50']:8.2f} / {text_half['p99']:8.2f}")
    held, before = summary(res["vector_half_held"]), summary(res["vector_half_sqlite"])
    print(
        f"  held / sqlite: p50 {held['p50'] / before['p50']:.2f}, p99 {held['p99'] / before['p99']:.2f}; same pinned lists: {same}"
    )
    print(f"  load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
