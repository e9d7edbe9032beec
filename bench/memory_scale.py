"""Benchmark of `mem` at 100k and 1M memories: full-text and hybrid search, flat scan against HNSW.

The stores are built once from bench/memory_corpus.py's deterministic text and
cached under var/bench/memory_scale/ (a rerun only measures). Vectors are the
hashed n-gram vectors of the tests' embeddings server (dimension 384), computed
in-process while building (their time is reported apart as embed_s); queries go
through the real loopback HTTP server, so the hybrid figure includes that round trip.

Per size it prints: full-text p50/p99 (ours and the reference tool's query shape
on the same file: the peer of bench/memory.py); hybrid p50/p99 through the
flat scan and through the HNSW index; the vector search alone (flat numpy scan,
the reference tool's method, against HNSW); recall@10 of HNSW against the exact
scan; index build time and size; load average.

Usage: .venv/bin/python bench/memory_scale.py [--sizes 100000,1000000] [--queries 300]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import memory as bench_memory  # noqa: E402
from bench.memory import DIM, build, make_query, reference_fts_peer, slowest, summary, table, timed  # noqa: E402
from bench.memory_corpus import scale_corpus  # noqa: E402
from deployments.memory import ann, embed, vcache, vsearch  # noqa: E402
from deployments.memory.config import load_settings  # noqa: E402
from deployments.memory.query import build_match  # noqa: E402
from deployments.memory.service import Memory  # noqa: E402
from tests.deployments.memory.embedserver import EmbeddingServer, hashed_vector  # noqa: E402

MODEL = "bench-hash"
MIN_SIM = 0.25
CROSSOVER_SIZES = (5000, 10_000, 20_000, 50_000)

STORES = ROOT / "var" / "bench" / "memory_scale"


def store_path(size: int) -> str:
    return str(STORES / f"m{size}" / "memories.db")


def ensure_store(size: int, paragraphs: list[str]) -> dict:
    """The cached store of `size` memories (built when missing); its build timings."""
    path = store_path(size)
    stamp = Path(path).with_suffix(".built.json")
    if stamp.exists():
        return dict(json.loads(stamp.read_text()))
    for leftover in Path(path).parent.glob("memories.db*"):
        if leftover.is_file():
            leftover.unlink()
    timings: dict[str, float] = {}
    t = time.perf_counter()
    build(path, paragraphs[:size], with_vectors=True, timings=timings)
    info = {"size": size, "build_s": round(time.perf_counter() - t, 1), **{k: round(v, 1) for k, v in timings.items()}}
    info["load_avg"] = os.getloadavg()
    stamp.write_text(json.dumps(info))
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--text-only", action="store_true", help="the full-text section only (no HNSW index needed)")
    parser.add_argument("--json", default="", help="also write the results to this file")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    paragraphs = scale_corpus(max(sizes) + 1000)
    # The 1M paragraphs stay in this process for the queries; without this every full collection of
    # the searching thread walks them (20-40 ms spikes in the search timings that a `mem` process,
    # which holds no corpus, never has).
    gc.freeze()
    for size in sizes:
        print(json.dumps(ensure_store(size, paragraphs)), flush=True)
    if args.build_only:
        return
    results = []
    with EmbeddingServer("ok", dim=DIM) as server:
        for size in sizes:
            res = measure(size, paragraphs, args.queries, server, text_only=args.text_only)
            results.append(res)
            print(json.dumps(res), flush=True)
    if not args.text_only:
        report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


def ensure_index(size: int) -> dict:
    """Build the HNSW index of the cached store when it has none; its build time and file size."""
    path = store_path(size)
    stamp = Path(path).with_suffix(".index.json")
    mem = Memory(load_settings({"MEM_DB": path}), warn=print)  # migrates the cached store when it is older
    conn = mem.store.conn
    if stamp.exists() and ann.load(path, conn, MODEL, DIM * 4) is not None:
        info = dict(json.loads(stamp.read_text()))
    else:
        t = time.perf_counter()
        hwm = ann.high_water(conn)
        matrix, rows, _ = vcache.read(conn, MODEL, DIM * 4)
        read_s = time.perf_counter() - t
        t = time.perf_counter()
        index = ann.build(path, conn, MODEL, DIM * 4, hwm, rows[:, 0], matrix)
        info = {
            "read_vectors_s": round(read_s, 1),
            "index_build_s": round(time.perf_counter() - t, 1),
            "index_mb": round(index.meta["bytes"] / 2**20, 1),
            "vectors": index.meta["count"],
            "connectivity": ann.CONNECTIVITY,
            "expansion_add": ann.EXPANSION_ADD,
            "load_avg": os.getloadavg(),
        }
        stamp.write_text(json.dumps(info))
    mem.store.close()
    return info


def qvec(text: str):
    import numpy as np

    return np.frombuffer(embed.pack(hashed_vector(text, DIM)), dtype="<f4")


def recall(index: ann.Index, matrix, rows, queries: list[str], k: int = 10) -> float:
    """Share of the exact top-k (by cosine, every active vector) that the index's top-k holds."""
    import numpy as np

    found = 0
    for q in queries:
        v = qvec(q)
        exact = set(rows[np.argsort(-(matrix @ v))[:k], 0].tolist())
        found += len(exact & {i for i, _ in index.candidates(v, k)})
    return round(found / (k * len(queries)), 4)


def crossover(matrix, rows, scopes, conn, queries: list[str]) -> list[dict]:
    """Vector search alone on the first n vectors: flat scan against HNSW candidates plus the exact re-score."""
    from usearch.index import Index as Usearch

    out = []
    vectors = [qvec(q) for q in queries]
    for n in CROSSOVER_SIZES:
        if n > len(rows):
            break
        sub_m, sub_r = matrix[:n], rows[:n]
        flat = timed(
            lambda v, m=sub_m, r=sub_r: vsearch._flat(v, m, r, scopes, "user", 30, MIN_SIM), vectors, time.thread_time
        )
        index = Usearch(
            ndim=DIM,
            metric="cos",
            dtype=ann.DTYPE,
            connectivity=ann.CONNECTIVITY,
            expansion_add=ann.EXPANSION_ADD,
            expansion_search=ann.EXPANSION_SEARCH,
        )
        index.add(sub_r[:, 0].astype("uint64"), sub_m, threads=0)
        index.expansion_search = ann.EXPANSION_SEARCH
        wrapped = ann.Index(view=index, meta={}, seen=0)

        def hnsw(v, w=wrapped) -> None:
            ids = [i for i, s in w.candidates(v, 120) if s >= MIN_SIM - vsearch.APPROX_MARGIN]
            vsearch._scored(conn, v, "pinned = 0 AND archived = 0", (), MODEL, DIM * 4, MIN_SIM, ids)

        out.append({"n": n, "flat": summary(flat), "hnsw": summary(timed(hnsw, vectors, time.thread_time))})
    return out


def measure(size: int, paragraphs: list[str], n_queries: int, server: EmbeddingServer, text_only: bool = False) -> dict:
    path = store_path(size)
    res: dict = {"size": size, "store": ensure_store(size, paragraphs)}
    if not text_only:
        res["index"] = ensure_index(size)
    rng = random.Random(size)
    queries = [make_query(paragraphs[rng.randrange(size)], rng) for _ in range(n_queries)]
    env = {"MEM_DB": path}
    text_mem = Memory(load_settings(env), warn=print)
    timed(lambda q: text_mem.search(q, 10), queries[:30])  # warm the page cache
    text_times = timed(lambda q: text_mem.search(q, 10), queries)
    res["search_text"] = summary(text_times)
    res["peer_reference_fts"] = summary(reference_fts_peer(text_mem.store, [build_match(q) for q in queries]))
    # The same queries in the searching thread's CPU time: other jobs on the 2 shared cores barely move it.
    text_cpu = timed(lambda q: text_mem.search(q, 10), queries, time.thread_time)
    res["search_text_cpu"] = summary(text_cpu)
    res["search_text_slowest"] = slowest(text_mem.store, queries, text_cpu, 5)
    res["ranking_vs_fts5_bm25"] = ranking_agreement(text_mem, queries)
    bench_memory.TEXT_CLOCK = time.thread_time
    res["peer_reference_fts_cpu"] = summary(reference_fts_peer(text_mem.store, [build_match(q) for q in queries]))
    bench_memory.TEXT_CLOCK = time.perf_counter
    res["load_avg_text"] = os.getloadavg()
    if text_only:
        text_mem.store.close()
        return res

    conn = text_mem.store.conn
    t = time.perf_counter()
    matrix, rows, scopes = vcache.read(conn, MODEL, DIM * 4)
    res["read_all_vectors_s"] = round(time.perf_counter() - t, 2)
    index = ann.load(path, conn, MODEL, DIM * 4)
    assert index is not None
    n_vec = 200 if size <= 100_000 else 100  # each exact answer at 1M is a 1.5 GB scan
    res["recall_at_10"] = recall(index, matrix, rows, queries[:n_vec])
    vectors = [qvec(q) for q in queries[:n_vec]]
    exact_lists = [vsearch._flat(v, matrix, rows, scopes, "user", 10, MIN_SIM) for v in vectors]
    ann_lists = [vsearch._indexed(path, conn, index, v, MODEL, "user", 10, MIN_SIM) for v in vectors]
    res["recall_at_10_vector_list"] = round(
        sum(len({i for i, _ in a} & {i for i, _ in e}) for a, e in zip(ann_lists, exact_lists, strict=True))
        / max(1, sum(len(e) for e in exact_lists)),
        4,
    )
    res["vector_flat"] = summary(
        timed(lambda v: vsearch._flat(v, matrix, rows, scopes, "user", 30, MIN_SIM), vectors, time.thread_time)
    )
    res["vector_hnsw"] = summary(
        timed(
            lambda v: vsearch.vector_hits(path, conn, MODEL, v.tobytes(), "user", 30, MIN_SIM),
            vectors,
            time.thread_time,
        )
    )
    if size <= 100_000:
        res["crossover"] = crossover(matrix, rows, scopes, conn, queries[:100])

    hybrid_env = dict(env, MEM_EMBEDDING_URL=server.base_url, MEM_EMBEDDING_MODEL=MODEL, MEM_EMBED_TIMEOUT="10s")
    hybrid_mem = Memory(load_settings(hybrid_env), warn=print)
    timed(lambda q: hybrid_mem.search(q, 10), queries[:10])
    res["search_hybrid_hnsw"] = summary(timed(lambda q: hybrid_mem.search(q, 10), queries))
    # The searching thread's CPU: the embeddings server (another thread of this process) is not counted,
    # the HTTP client's side of the round trip is. Then the two halves alone, as a hybrid search runs them.
    res["search_hybrid_hnsw_cpu"] = summary(timed(lambda q: hybrid_mem.search(q, 10), queries, time.thread_time))
    res["text_half_cpu"] = summary(timed(lambda q: text_mem._text_hits("user", q, 30), queries, time.thread_time))
    res["load_avg_hybrid"] = os.getloadavg()
    flat_queries = queries[: 100 if size <= 100_000 else 40]
    saved = ann.load, ann.THRESHOLD
    ann.load, ann.THRESHOLD = (lambda *a: None), 10**12  # the flat path, as before the index
    try:
        t = time.perf_counter()
        hybrid_mem.search(queries[0], 10)  # reads SQLite and writes the flat cache
        res["search_hybrid_flat_cold_s"] = round(time.perf_counter() - t, 2)
        res["search_hybrid_flat"] = summary(timed(lambda q: hybrid_mem.search(q, 10), flat_queries))
    finally:
        ann.load, ann.THRESHOLD = saved
        vcache_files = Path(path + ".vectors")
        for f in vcache_files.iterdir():
            if not f.name.startswith("hnsw-"):
                f.unlink()
    text_mem.store.close()
    hybrid_mem.store.close()
    return res


def ranking_agreement(mem: Memory, queries: list[str]) -> dict:
    """How many queries get the same top 10 (ids, then ids and order) with mem_bm25's counts (exact up to
    store.RANK_COUNT_EXACT, estimated above) as with FTS5's own bm25(); and the CPU time of both, run
    back to back on each query in alternating order."""
    store = mem.store
    if not store.rank_counts:
        return {"available": False}
    same_set = same_order = 0
    builtin: list[float] = []
    ours_cpu: list[float] = []

    def run(counts: bool, q: str, times: list[float]) -> list[str]:
        store.rank_counts = counts
        t = time.thread_time()
        keys = [r["key"] for r in mem.search(q, 10)["results"]]
        times.append(time.thread_time() - t)
        return keys

    for i, q in enumerate(queries):
        # Each query's first run reads its pages; the order alternates so neither path always gets them warm.
        if i % 2:
            theirs = run(False, q, builtin)
            ours = run(True, q, ours_cpu)
        else:
            ours = run(True, q, ours_cpu)
            theirs = run(False, q, builtin)
        same_set += set(ours) == set(theirs)
        same_order += ours == theirs
    store.rank_counts = True
    return {
        "queries": len(queries),
        "same_top10": same_set,
        "same_top10_order": same_order,
        "fts5_bm25_cpu": summary(builtin),
        "mem_bm25_cpu": summary(ours_cpu),
    }


def report(results: list[dict]) -> None:
    print("\nmem at scale (ms, p50 / p99; wall time, except *_cpu and vector_*: the searching thread's CPU time)")
    cols = (
        "search_text",
        "search_text_cpu",
        "peer_reference_fts_cpu",
        "search_hybrid_hnsw",
        "search_hybrid_hnsw_cpu",
        "search_hybrid_flat",
        "text_half_cpu",
        "vector_hnsw",
        "vector_flat",
    )
    table(results, cols)
    for r in results:
        ix, st = r["index"], r["store"]
        print(
            f"{r['size']:>8}: recall@10 {r['recall_at_10']} (vector list of a search: {r['recall_at_10_vector_list']}); "
            f"index build {ix['index_build_s']} s, {ix['index_mb']} MB (M={ix['connectivity']}, "
            f"ef_add={ix['expansion_add']}, ef_search={ann.EXPANSION_SEARCH}); store build {st['build_s']} s "
            f"of which embeddings {st['embed_s']} s; flat cold {r['search_hybrid_flat_cold_s']} s"
        )
        agree = r["ranking_vs_fts5_bm25"]
        if agree.get("available", True):
            print(
                f"          top 10 as with FTS5's bm25(): {agree['same_top10']} / {agree['queries']} "
                f"(same order {agree['same_top10_order']}); FTS5 bm25() path CPU p50 / p99 "
                f"{agree['fts5_bm25_cpu']['p50']:.2f} / {agree['fts5_bm25_cpu']['p99']:.2f} ms"
            )
        ref = r["peer_reference_fts_cpu"]["p99"]
        print(
            f"          full-text p99 (CPU) {r['search_text_cpu']['p99']:.2f} ms, reference-fts peer {ref:.2f} ms -> ratio "
            f"{r['search_text_cpu']['p99'] / ref:.2f}; hybrid p99 HNSW / flat "
            f"{r['search_hybrid_hnsw']['p99'] / r['search_hybrid_flat']['p99']:.2f}; load average "
            f"{r['load_avg_text']} / {r['load_avg_hybrid']}"
        )
        for q in r["search_text_slowest"]:
            print(f"          {q['ms']:8.2f} {q['matches']:7d}  {q['match']}")
        for c in r.get("crossover", []):
            print(f"          n={c['n']:>7}: flat p50 {c['flat']['p50']:.2f} ms, HNSW p50 {c['hnsw']['p50']:.2f} ms")


if __name__ == "__main__":
    main()
