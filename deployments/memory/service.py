"""The memory operations shared by the CLI, the REST server and the MCP server.

Adds to the store what needs the embeddings endpoint: best-effort vectors on
save, hybrid search with reciprocal rank fusion, and the `reembed` backfill.

Ranking (documented in README.md):
- full-text: pinned first, then BM25 (key x3, value x1, tags x2), then most
  recently updated, then newest id;
- hybrid: the best `3 x limit` full-text hits and the best `3 x limit` vector
  hits (cosine >= MEM_VECTOR_MIN_SIM, same model and dimension) are fused with
  RRF: score = Wt/(k + text_rank) + Wv/(k + vector_rank) (k = MEM_RRF_K,
  default 60; weights MEM_RRF_TEXT_WEIGHT / MEM_RRF_VECTOR_WEIGHT, default 1);
  then ordered pinned first, RRF score, most recently updated, newest id.
  Both candidate lists take pinned matches first, so a pinned match is never
  cut by the candidate limit: pinned items rank the same way in both modes.
- when no memory matches every word, both modes loosen the query (README,
  "Search and ranking": first the words found somewhere must all match, then
  any one word may), and the result says `"match": "any"` (otherwise `"all"`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from deployments.memory import embed
from deployments.memory.config import Settings
from deployments.memory.errors import EmbeddingError, StorageError, UsageError
from deployments.memory.query import build_match, relaxed_matches
from deployments.memory.records import check_scope, check_value, normalize_tags
from deployments.memory.store import ANY_CANDIDATES, Store, check_limit, embedding_text

Warn = Callable[[str], None]


def stderr_warning(message: str) -> None:
    sys.stderr.write(f"mem: warning: {message}\n")
    sys.stderr.flush()


class Memory:
    def __init__(self, settings: Settings, store: Store | None = None, warn: Warn = stderr_warning) -> None:
        self.settings = settings
        self.store = store or Store(settings.db_path)
        self.warn = warn
        self.client = embed.client_for(settings)
        self._pool: ThreadPoolExecutor | None = None

    def scope(self, scope: str | None, allow_all: bool = False) -> str:
        return check_scope(scope if scope else self.settings.scope, allow_all=allow_all)

    def _vector(self, text: str, purpose: str) -> bytes | None:
        """A packed vector for `text`, or None (with a warning) when the endpoint fails."""
        if self.client is None:
            return None
        try:
            return embed.pack(self.client.embed([text])[0])
        except EmbeddingError as exc:
            self.warn(f"{exc.message}; {purpose}")
            return None

    # ----- writes --------------------------------------------------------------

    def _prepare(self, value: str, tags: object) -> tuple[list[str], bytes | None, str]:
        """What every write needs: a checked value's tags, its vector (if any) and the model id."""
        check_value(value)
        tag_list = normalize_tags(tags)
        vector = self._vector(embedding_text(value, tag_list), "saved without a vector (run `mem reembed` later)")
        return tag_list, vector, self.client.model_id if self.client else ""

    def save(
        self, key: str, value: str, tags: object = None, origin: str = "", scope: str | None = None
    ) -> dict[str, Any]:
        scope = self.scope(scope)
        tag_list, vector, model = self._prepare(value, tags)
        return self.store.save(
            scope,
            key,
            value,
            tag_list,
            origin=origin or "",
            vector=vector,
            model=model,
            detect_conflicts=not self.settings.conflict_disable,
        )

    def supersede(
        self, old_key: str, new_key: str, value: str, tags: object = None, scope: str | None = None
    ) -> dict[str, Any]:
        scope = self.scope(scope)
        tag_list, vector, model = self._prepare(value, tags)
        return self.store.supersede(scope, old_key, new_key, value, tag_list, vector=vector, model=model)

    # ----- search --------------------------------------------------------------

    def search(self, query: str, limit: int = 50, scope: str | None = None) -> dict[str, Any]:
        """Full-text (or hybrid) search; `match` says whether every word had to match.

        When no memory matches every word of the query (`match: "all"`), the
        memories matching any of them are ranked instead (`match: "any"`).
        """
        if not isinstance(query, str) or not query.strip():
            raise UsageError("query must not be empty")
        scope = self.scope(scope, allow_all=True)
        limit = check_limit(limit)
        if self.client is not None:
            # The query's embedding is fetched while the text half runs: a hosted endpoint's round
            # trip no longer adds to the text search's time. The text list of depth 3 x limit cut to
            # `limit` is the text-only answer (each stage's order is a prefix of the deeper one's).
            depth = limit * 3
            pending = self._embedder().submit(self._vector, query, "using full-text search only")
            text_hits, kind = self._text_hits(scope, query, depth)
            qvec = pending.result()
            if qvec is not None:
                results = self._hybrid(text_hits, self._vector_hits(scope, qvec, depth), limit)
                return {"query": query, "mode": "hybrid", "match": kind, "count": len(results), "results": results}
            results = text_hits[:limit]
        else:
            results, kind = self._text_hits(scope, query, limit)
        for r in results:
            r.pop("id", None)
        return {"query": query, "mode": "text", "match": kind, "count": len(results), "results": results}

    def _embedder(self) -> ThreadPoolExecutor:
        """Threads that wait for query embeddings; a few, so searches sharing this Memory do not queue."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mem-query-embed")
        return self._pool

    def _text_hits(self, scope: str, query: str, limit: int) -> tuple[list[dict[str, Any]], str]:
        """BM25 hits of every word ("all"); when there are none, of the loosened query ("any").

        The loosened forms are tried in order and their hits appended until `limit`:
        first the memories with every word that some memory has, then those with any word.
        """
        match = build_match(query)
        hits: list[dict[str, Any]] = self.store.text_search(scope, match, limit) if match else []
        if hits:
            return hits, "all"
        for loose, any_word in relaxed_matches(query, self.store.has_match):
            if len(hits) >= limit:
                break
            seen = {h["id"] for h in hits}
            more: list[dict[str, Any]] = self.store.text_search(
                scope,
                loose,
                limit + len(hits),
                candidates=ANY_CANDIDATES if any_word else None,
                older_pinned=not any_word,
            )
            hits += [h for h in more if h["id"] not in seen][: limit - len(hits)]
        return hits, "any" if hits else "all"

    def _hybrid(
        self, text_hits: list[dict[str, Any]], vector_hits: list[tuple[int, float]], limit: int
    ) -> list[dict[str, Any]]:
        s = self.settings
        fused: dict[int, dict[str, Any]] = {}
        for rank, hit in enumerate(sorted(text_hits, key=lambda h: -h["score"]), start=1):
            fused[hit["id"]] = {
                "record": hit,
                "rrf": s.rrf_text_weight / (s.rrf_k + rank),
                "text_score": hit["score"],
                "vector_score": None,
            }
        for rank, (mem_id, sim) in enumerate(vector_hits, start=1):
            entry = fused.setdefault(mem_id, {"record": None, "rrf": 0.0, "text_score": None})
            entry["rrf"] += s.rrf_vector_weight / (s.rrf_k + rank)
            entry["vector_score"] = round(sim, 6)
        missing = [i for i, e in fused.items() if e["record"] is None]
        for mem_id, rec in self.store.records_by_id(missing).items():
            rec["snippet"] = rec["value"][:160]
            fused[mem_id]["record"] = rec
        ordered = [e for e in fused.values() if e["record"] is not None]
        # Stable sorts, least significant first: id, updated_at, RRF score, pinned.
        ordered.sort(key=lambda e: e["record"]["id"], reverse=True)
        ordered.sort(key=lambda e: e["record"]["updated_at"] or "", reverse=True)
        ordered.sort(key=lambda e: e["rrf"], reverse=True)
        ordered.sort(key=lambda e: e["record"]["pinned"], reverse=True)
        out = []
        for e in ordered[:limit]:
            rec = dict(e["record"])
            rec.pop("id", None)
            rec["score"] = round(e["rrf"], 6)
            rec["text_score"] = e["text_score"]
            rec["vector_score"] = e["vector_score"]
            out.append(rec)
        return out

    def _vector_hits(self, scope: str, qvec: bytes, depth: int) -> list[tuple[int, float]]:
        """Best vector matches: pinned first, then cosine; only rows of the same model and dimension."""
        import sqlite3

        from deployments.memory.vsearch import vector_hits

        if self.client is None:
            return []
        try:
            return vector_hits(
                self.store.path,
                self.store.conn,
                self.client.model_id,
                qvec,
                scope,
                depth,
                self.settings.vector_min_similarity,
            )
        except sqlite3.Error as exc:
            raise StorageError(f"storage error: {exc}") from exc

    # ----- embeddings backfill ----------------------------------------------------

    def reembed(
        self, force: bool = False, progress: Callable[[int, int], None] | None = None, batch: int = 32
    ) -> dict[str, Any]:
        if self.client is None:
            why = "MEM_EMBED_DISABLE=1" if self.settings.embed_disable else "MEM_EMBEDDING_URL is not set"
            raise EmbeddingError(f"reembed needs an embeddings endpoint ({why})")
        model = self.client.model_id
        ids = self.store.needing_embedding(model, force)
        done = 0
        if progress:
            progress(0, len(ids))
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            texts = self.store.texts_for(chunk)
            order = [i for i in chunk if i in texts]
            try:
                vectors = self.client.embed([texts[i] for i in order])
            except EmbeddingError as exc:
                raise EmbeddingError(f"{exc.message} (after {done} of {len(ids)} embedded)") from None
            self.store.set_embeddings([(i, embed.pack(v)) for i, v in zip(order, vectors, strict=False)], model)
            done += len(order)
            if progress:
                progress(done, len(ids))
        return {"embedded": done, "total": len(ids), "model": model, "force": force}
