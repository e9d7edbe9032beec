"""Automatic conflict resolution on save: find the active memory a new one repeats.

Decision rule (documented in README.md, tested on real text pairs):
- the unit of comparison is the set of content words of `value + tags`
  (lower-cased letters/digits, stop-words removed);
- text rule: Jaccard similarity >= JACCARD_MIN (0.8);
- vector rule, only when both memories carry a vector of the same model:
  cosine >= COSINE_MIN (0.95) and Jaccard >= COSINE_JACCARD_FLOOR (0.65).
  The floor keeps topically-close but different facts ("rotates monthly" /
  "rotates weekly") apart even when an embedding model scores them close;
- pinned and archived memories are never candidates;
- among several duplicates the one with the largest normalised margin over its
  rule's threshold wins (so cosine and Jaccard are never compared raw), then
  the most recently updated.

Candidates come from the full-text index: an OR query over the RARE_WORDS (6)
rarest of the 12 longest words of the new content (document frequencies from an fts5vocab view;
words in more than 2% of the memories are left out when at least two rarer
ones remain); a memory is a candidate when it contains at least two of them
(with fewer than three rare words, any one). Up to 200 candidates are read,
and those that are active, unpinned and in the scope are compared. A save therefore reads a few short posting lists instead of
the whole scope; every duplicate under either rule shares most of its words
with the new text, so it contains some of its rarest ones.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from deployments.memory import embed
from deployments.memory.query import content_tokens, words

JACCARD_MIN = 0.8
COSINE_MIN = 0.95
COSINE_JACCARD_FLOOR = 0.65
CANDIDATES = 200
RARE_WORDS = 6
LOOKUP_WORDS = 12
COMMON_FRACTION = 0.02  # a word in more than 2% of the memories says little about identity
COMMON_MIN_DOCS = 50


@dataclass(frozen=True)
class Conflict:
    id: int
    key: str
    rule: str
    similarity: float


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def judge(
    new_tokens: set[str], old_tokens: set[str], new_vec: bytes | None, old_vec: bytes | None
) -> tuple[str, float, float] | None:
    """(rule, similarity, normalised margin) when the pair is a duplicate, else None."""
    jac = jaccard(new_tokens, old_tokens)
    best: tuple[str, float, float] | None = None
    if jac >= JACCARD_MIN:
        best = ("jaccard", jac, (jac - JACCARD_MIN) / (1 - JACCARD_MIN))
    if new_vec is not None and old_vec is not None and len(new_vec) == len(old_vec):
        cos = embed.dot(new_vec, old_vec)
        if cos >= COSINE_MIN and jac >= COSINE_JACCARD_FLOOR:
            margin = (cos - COSINE_MIN) / (1 - COSINE_MIN)
            if best is None or margin > best[2]:
                best = ("cosine", cos, margin)
    return best


def rare_words_query(conn: sqlite3.Connection, candidates: list[str]) -> str | None:
    """OR query over the rarest of `candidates` that occur in the index at all."""
    if not candidates:
        return None
    # fts5vocab counts documents by walking each word's posting list, so only the
    # longest words (usually the rarest) are looked up.
    candidates = sorted(candidates, key=lambda w: (-len(w), w))[:LOOKUP_WORDS]
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem_vocab USING fts5vocab(main, memories_fts, row)")
    marks = ",".join("?" * len(candidates))
    freq = dict(conn.execute(f"SELECT term, doc FROM temp.mem_vocab WHERE term IN ({marks})", candidates))
    present = sorted((w for w in candidates if freq.get(w)), key=lambda w: (freq[w], w))
    if not present:
        return None
    total = conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0]  # ~ row count, O(1)
    rare = [w for w in present if freq[w] <= max(COMMON_MIN_DOCS, COMMON_FRACTION * total)]
    present = (rare if len(rare) >= 2 else present[:2])[:RARE_WORDS]
    quoted = ['"' + w.replace('"', '""') + '"' for w in present]
    if len(quoted) < 3:
        return " OR ".join(quoted)
    # Any two of the rare words: a duplicate shares most words, so it has at least
    # two of them, and requiring two keeps the candidate set (and its cost) small.
    pairs = [f"({a} AND {b})" for i, a in enumerate(quoted) for b in quoted[i + 1 :]]
    return " OR ".join(pairs)


def find_conflict(
    conn: sqlite3.Connection, scope: str, value: str, tags: list[str], vector: bytes | None, model: str
) -> Conflict | None:
    text = value + " " + " ".join(tags)
    new_tokens = content_tokens(text)
    match = rare_words_query(conn, [w for w in dict.fromkeys(words(text)) if w in new_tokens and len(w) > 1])
    if match is None:
        return None
    top = [
        r[0]
        for r in conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?", (match, CANDIDATES))
    ]
    if not top:
        return None
    marks = ",".join("?" * len(top))
    rows = conn.execute(
        f"""SELECT id, key, value, tags, updated_at, embedding, embedding_model FROM memories
             WHERE id IN ({marks}) AND scope = ? AND archived = 0 AND pinned = 0""",
        (*top, scope),
    ).fetchall()
    best: tuple[float, int, Conflict] | None = None
    for row in rows:
        old_tokens = content_tokens(row["value"] + " " + row["tags"].replace(",", " "))
        old_vec = row["embedding"] if (vector is not None and row["embedding_model"] == model) else None
        verdict = judge(new_tokens, old_tokens, vector, old_vec)
        if verdict is None:
            continue
        rule, similarity, margin = verdict
        rank = (margin, row["updated_at"])
        if best is None or rank > best[:2]:
            best = (margin, row["updated_at"], Conflict(row["id"], row["key"], rule, round(similarity, 4)))
    return best[2] if best else None
