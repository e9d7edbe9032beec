"""Full-text and hybrid search: ranking rules, pinned items, endpoint URL forms, timeouts and failures."""

from __future__ import annotations

import pytest

from deployments.memory import embed
from deployments.memory.errors import EmbeddingError, UsageError
from tests.deployments.memory.conftest import memory_with
from tests.deployments.memory.embedserver import EmbeddingServer

NOTES = {
    "deploy-prod": ("Deploy to production with make release after the CI pipeline is green.", "ops"),
    "deploy-staging": ("Staging deploys run automatically on every merge to main.", "ops"),
    "db-backup": ("Database backups run nightly at 02:00 and are kept for 30 days.", "db,ops"),
    "editor": ("The user edits code in Neovim with the lazy.nvim plugin manager.", "tools"),
    "coffee": ("The coffee machine on floor 2 needs descaling every month.", "office"),
}


def fill(mem) -> None:
    for key, (value, tags) in NOTES.items():
        mem.save(key, value, tags)


def keys(result: dict) -> list[str]:
    return [r["key"] for r in result["results"]]


def test_text_search_words_any_order_and_prefix(memory):
    fill(memory)
    assert keys(memory.search("release production deploy")) == ["deploy-prod"]
    assert keys(memory.search("nightl backu")) == ["db-backup"]
    res = memory.search("deploy")
    assert res["mode"] == "text" and set(keys(res)) == {"deploy-prod", "deploy-staging"}
    assert res["results"][0]["snippet"].count("<<") >= 1
    assert keys(memory.search("tools")) == ["editor"]  # tags are indexed
    assert keys(memory.search("zzzz")) == []
    assert keys(memory.search('"; DROP TABLE memories; --')) == []
    with pytest.raises(UsageError):
        memory.search("   ")


def test_key_matches_outrank_value_matches(memory):
    memory.save("kubernetes", "Cluster notes: nodes are managed by the platform team.")
    memory.save("notes", "We moved everything to kubernetes last year, see the cluster notes.")
    assert keys(memory.search("kubernetes")) == ["kubernetes", "notes"]


def test_pinned_first_in_text_mode(memory):
    fill(memory)
    memory.store.set_pinned("user", "deploy-staging", True)
    assert keys(memory.search("deploy production release"))[0] == "deploy-prod"  # only one matches
    assert keys(memory.search("deploy"))[0] == "deploy-staging"


def test_limit_and_scope(memory):
    fill(memory)
    memory.save("deploy-other", "Deploy the other repo with tox", scope="repo:other")
    assert len(memory.search("deploy", 1)["results"]) == 1
    assert "deploy-other" not in keys(memory.search("deploy"))
    assert "deploy-other" in keys(memory.search("deploy", scope="*"))
    with pytest.raises(UsageError):
        memory.search("deploy", 0)


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/", "/v1/embeddings"])
def test_endpoint_url_forms(tmp_path, embed_server, suffix):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url + suffix, MEM_EMBEDDING_MODEL="m1")
    assert mem.save("k", "vector please")["embedded"] is True
    assert embed_server.requests[-1]["path"] == "/v1/embeddings"
    assert embed_server.requests[-1]["body"]["model"] == "m1"


def test_endpoint_url_must_be_http():
    with pytest.raises(EmbeddingError):
        embed.endpoint_url("ftp://host/x")


def test_hybrid_finds_by_meaning_and_fuses(tmp_path, embed_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url)
    fill(mem)
    res = mem.search("production deploy")
    assert res["mode"] == "hybrid"
    assert keys(res)[0] == "deploy-prod"
    top = res["results"][0]
    assert top["text_score"] is not None and top["vector_score"] is not None
    assert top["score"] == pytest.approx(1 / 61 + 1 / 61, rel=1e-3)
    # misspellings (no word matches, not even as a prefix) are close in character n-grams
    typo = mem.search("cofee machnie descalling")
    assert keys(typo)[0] == "coffee" and typo["results"][0]["text_score"] is None


def test_hybrid_pinned_first_same_rule(tmp_path, embed_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url)
    fill(mem)
    unpinned = mem.search("deploy")
    assert keys(unpinned)[0] == "deploy-prod" and "deploy-staging" in keys(unpinned)
    mem.store.set_pinned("user", "deploy-staging", True)
    res = mem.search("deploy")
    assert res["mode"] == "hybrid" and keys(res)[0] == "deploy-staging"
    text = memory_with(tmp_path, MEM_EMBED_DISABLE="1").search("deploy")
    assert text["mode"] == "text" and keys(text)[0] == "deploy-staging"


def test_rrf_weights_are_applied(tmp_path, embed_server):
    mem = memory_with(
        tmp_path,
        MEM_EMBEDDING_URL=embed_server.base_url,
        MEM_RRF_K="0",
        MEM_RRF_TEXT_WEIGHT="0",
        MEM_RRF_VECTOR_WEIGHT="2",
    )
    fill(mem)
    top = mem.search("deploy production")["results"][0]
    assert top["score"] == pytest.approx(2.0)  # 2 / (0 + 1): text weight 0, vector rank 1


def test_stalling_endpoint_falls_back_within_timeout(tmp_path, stalling_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=stalling_server.base_url, MEM_EMBED_TIMEOUT="300ms")
    saved = mem.save("deploy-prod", NOTES["deploy-prod"][0])
    res = mem.search("deploy production")
    assert saved["embedded"] is False
    assert res["mode"] == "text" and keys(res) == ["deploy-prod"]
    # both calls reached the server and returned while it still held them unanswered
    assert len(stalling_server.requests) == 2 and not stalling_server.gate.is_set()
    assert any("timed out after 0.3s" in w for w in mem.warnings), mem.warnings
    assert any("full-text search only" in w for w in mem.warnings)


def test_text_half_runs_while_the_query_embedding_is_fetched(tmp_path, monkeypatch):
    """The endpoint answers only once the text half has run: a search that waited for the
    embedding before its text half would time out and answer in text mode."""
    with EmbeddingServer("gate", stall_seconds=30) as server:
        mem = memory_with(tmp_path, MEM_EMBEDDING_URL=server.base_url, MEM_EMBED_TIMEOUT="20s")
        server.gate.set()
        fill(mem)
        server.gate.clear()
        text_search = mem.store.text_search

        def text_then_open(*args, **kwargs):
            out = text_search(*args, **kwargs)
            server.gate.set()
            return out

        monkeypatch.setattr(mem.store, "text_search", text_then_open)
        res = mem.search("deploy production")
        assert res["mode"] == "hybrid" and keys(res)[0] == "deploy-prod"
        assert not mem.warnings


@pytest.mark.parametrize("query", ["deploy", "runs", "deploy coffee kubernetes", "zzzz"])
def test_fallback_is_the_text_only_answer(tmp_path, failing_server, query):
    """Cut to the limit, the deeper text list fetched for hybrid search is what text mode answers."""
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=failing_server.base_url)
    fill(mem)
    for i in range(12):
        mem.save(f"extra-{i}", f"Deploy note {i}: staging runs, coffee {i} and kubernetes.")
    text_only = memory_with(tmp_path)
    for limit in (1, 2, 5):
        fallen = mem.search(query, limit)
        assert fallen["mode"] == "text"
        assert fallen == text_only.search(query, limit)


def test_failing_endpoint_falls_back(tmp_path, failing_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=failing_server.base_url)
    mem.save("deploy-prod", NOTES["deploy-prod"][0])
    res = mem.search("deploy")
    assert res["mode"] == "text" and keys(res) == ["deploy-prod"]
    assert any("HTTP 500" in w for w in mem.warnings)


def test_unreachable_endpoint_falls_back(tmp_path):
    from tests.conftest import free_port

    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=f"http://127.0.0.1:{free_port()}")
    mem.save("k", "some text to find")
    assert keys(mem.search("text find")) == ["k"]
    assert any("unreachable" in w for w in mem.warnings)


def test_embed_disable_turns_vectors_off(tmp_path, embed_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url, MEM_EMBED_DISABLE="1")
    assert mem.save("k", "text")["embedded"] is False
    assert mem.search("text")["mode"] == "text"
    assert embed_server.requests == []
    with pytest.raises(EmbeddingError, match="MEM_EMBED_DISABLE"):
        mem.reembed()


def test_reembed_backfills_and_model_change(tmp_path, embed_server):
    plain = memory_with(tmp_path)
    fill(plain)
    with pytest.raises(EmbeddingError, match="MEM_EMBEDDING_URL"):
        plain.reembed()
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url, MEM_EMBEDDING_MODEL="a")
    progress: list[tuple[int, int]] = []
    result = mem.reembed(progress=lambda d, t: progress.append((d, t)), batch=2)
    assert result["embedded"] == len(NOTES) and progress[-1] == (len(NOTES), len(NOTES))
    assert mem.reembed()["embedded"] == 0  # nothing left
    before = plain.store.get("user", "editor")["updated_at"]
    assert mem.store.get("user", "editor")["updated_at"] == before  # re-embedding is not an edit
    other = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url, MEM_EMBEDDING_MODEL="b")
    assert other.store.embedding_models() == {"a": len(NOTES)}
    res = other.search("coffe machin")  # vectors of model a are never compared with model b's query
    assert all(r["vector_score"] is None for r in res["results"])
    assert other.reembed()["embedded"] == len(NOTES)
    assert other.store.embedding_models() == {"b": len(NOTES)}
    assert mem.reembed(force=True)["embedded"] == len(NOTES)


def test_reembed_failure_reports_progress(tmp_path, failing_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=failing_server.base_url)
    fill(mem)
    with pytest.raises(EmbeddingError, match="after 0 of 5"):
        mem.reembed()


def test_dimension_mismatch_is_skipped(tmp_path, embed_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url)
    fill(mem)
    embed_server.dim = 64  # the endpoint now answers with another dimension
    res = mem.search("coffee")
    assert res["mode"] == "hybrid" and keys(res) == ["coffee"]
    assert res["results"][0]["vector_score"] is None


@pytest.mark.parametrize("rank_counts", [True, False], ids=["mem_bm25", "fts5_bm25"])
@pytest.mark.parametrize("candidates", [10**9, 40, 7])
def test_ranking_follows_the_rule_over_the_candidates(memory, monkeypatch, candidates, rank_counts):
    """Pinned first, then BM25, update time and id, over the candidates: the newest
    CANDIDATES active matches of the scope (all when fewer) plus every pinned match.
    The same with FTS5's bm25() and with mem_bm25 (exact counts below RANK_COUNT_EXACT,
    the older pinned matches scored in memories_pinned_fts)."""
    import random

    from deployments.memory import store as store_mod
    from deployments.memory.query import build_match

    assert memory.store.rank_counts, "the compiled _rank module is missing: python scripts/build_ext.py"
    memory.store.rank_counts = rank_counts
    monkeypatch.setattr(store_mod, "CANDIDATES", candidates)
    rng = random.Random(3)
    vocab = ["alpha", "beta", "gamma", "delta", "common", "word", "note", "deploy"]
    scope_of: dict[str, str] = {}
    for i in range(300):
        text = " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 12)))
        scope_of[f"k{i}"] = rng.choice(["user", "work"])
        memory.store.save(scope_of[f"k{i}"], f"k{i}", f"common {text}", detect_conflicts=False)
    for i in range(0, 300, 17):
        assert memory.store.set_pinned(scope_of[f"k{i}"], f"k{i}", True)["pinned"] is True
    for i in range(5, 300, 23):
        for scope in ("user", "work"):
            memory.store.conn.execute("UPDATE memories SET archived = 1 WHERE scope = ? AND key = ?", (scope, f"k{i}"))
    conn = memory.store.conn
    for query in ("common", "alpha delta", "note", "zzz", "gam OR del -beta"):
        match = build_match(query)
        for scope in ("user", "*"):
            scope_sql = "" if scope == "*" else " AND m.scope = 'user'"
            base = (
                "FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND m.archived = 0{scope_sql} "
            )
            newest = [r[0] for r in conn.execute(f"SELECT m.id {base} ORDER BY m.id DESC LIMIT ?", (match, candidates))]
            marks = ",".join("?" * len(newest)) or "NULL"
            expected = [
                r[0]
                for r in conn.execute(
                    f"SELECT m.key {base} AND (m.pinned = 1 OR m.id IN ({marks})) "
                    "ORDER BY m.pinned DESC, bm25(memories_fts, 3.0, 1.0, 2.0), m.updated_at DESC, m.id DESC LIMIT 15",
                    (match, *newest),
                )
            ]
            got = [r["key"] for r in memory.store.text_search(scope, match, 15)]
            assert got == expected, (query, scope)
            exact = conn.execute(
                f"SELECT m.key, bm25(memories_fts, 3.0, 1.0, 2.0) {base} AND m.key IN ({','.join('?' * len(got))})",
                (match, *got),
            ).fetchall()
            scores = {r["key"]: r["score"] for r in memory.store.text_search(scope, match, 15)}
            assert scores == {k: round(-v, 6) for k, v in exact}, (query, scope)  # the same BM25 values
            pins = [bool(r["pinned"]) for r in memory.store.text_search(scope, match, 15)]
            assert pins == sorted(pins, reverse=True) and (query == "zzz" or any(pins)), (query, scope)
            if candidates >= 300:  # every match is a candidate: plain BM25 over all of them
                full = [
                    r[0]
                    for r in conn.execute(
                        f"SELECT m.key {base} ORDER BY m.pinned DESC, bm25(memories_fts, 3.0, 1.0, 2.0), "
                        "m.updated_at DESC, m.id DESC LIMIT 15",
                        (match,),
                    )
                ]
                assert got == full


def test_pinned_index_holds_the_active_pinned_memories(memory):
    """memories_pinned_fts (schema V9) follows every write: pin, unpin, archive, edit, rename, delete."""
    store = memory.store

    def pinned_index() -> dict[int, tuple[str, str, str]]:
        rows = store.conn.execute("SELECT rowid, key, value, tags FROM memories_pinned_fts").fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def expected() -> dict[int, tuple[str, str, str]]:
        rows = store.conn.execute(
            "SELECT id, key, value, tags FROM memories WHERE pinned = 1 AND archived = 0"
        ).fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    fill(memory)
    steps = [
        lambda: store.set_pinned("user", "deploy-prod", True),
        lambda: store.set_pinned("user", "coffee", True),
        lambda: memory.save("deploy-prod", "Deploy with the release train now", "ops"),
        lambda: store.rename("user", "coffee", "coffee-machine"),
        lambda: store.conn.execute("UPDATE memories SET archived = 1 WHERE key = 'coffee-machine'"),
        lambda: store.conn.execute("UPDATE memories SET archived = 0 WHERE key = 'coffee-machine'"),
        lambda: memory.supersede("deploy-prod", "deploy-prod-2", "Deploys go through the release train"),
        lambda: store.set_pinned("user", "coffee-machine", False),
        lambda: store.delete("user", "deploy-prod-2"),
    ]
    for step in steps:
        step()
        assert pinned_index() == expected()
    assert store.conn.execute("SELECT count(*) FROM memories_pinned_fts WHERE memories_pinned_fts MATCH 'deploy*'")


def test_estimated_counts_keep_single_word_order_and_close_scores(memory, monkeypatch):
    """Above RANK_COUNT_EXACT a phrase's count is estimated: a one-phrase query keeps BM25's order
    (the IDF is a common factor), and the estimate is close on evenly spread words."""
    import random

    from deployments.memory import store as store_mod
    from deployments.memory.query import build_match

    rng = random.Random(5)
    for i in range(400):
        words = [
            "alpha" if i % 3 == 0 else "beta",
            *(rng.choice(["gamma", "delta", "eps"]) for _ in range(rng.randint(1, 9))),
        ]
        memory.store.save("user", f"k{i}", " ".join(words), detect_conflicts=False)
    store = memory.store
    exact = store.phrase_counts(build_match("alpha gamm"))
    assert exact == [
        store.conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (p,)).fetchone()[0]
        for p in ('"alpha"*', '"gamm"*')
    ]
    monkeypatch.setattr(store_mod, "RANK_COUNT_EXACT", 20)
    estimated = store.phrase_counts(build_match("alpha gamm"))
    assert all(abs(e - x) <= 0.25 * x for e, x in zip(estimated, exact, strict=True)), (estimated, exact)
    assert store.phrase_counts(build_match("alpha -gamm")) == [estimated[0], 0]  # excluded: counts 0
    for query in ("alpha", "gamm", "delta"):
        match = build_match(query)
        got = [r["key"] for r in store.text_search("user", match, 30)]
        store.rank_counts = False
        assert got == [r["key"] for r in store.text_search("user", match, 30)], query
        store.rank_counts = True


def test_stopwords_do_not_change_what_is_found(memory):
    """ "the deploy" finds what "deploy" finds, ranked the same; stop-words alone still search."""
    fill(memory)
    memory.save("the-who", "The Who played at the stadium", "music")
    assert keys(memory.search("the deploy")) == keys(memory.search("deploy"))
    assert keys(memory.search("deploy with the")) == keys(memory.search("deploy"))
    assert keys(memory.search("coffee on the floor")) == keys(memory.search("coffee floor")) == ["coffee"]
    only_stop = keys(memory.search("the who"))
    assert only_stop[0] == "the-who"
    assert keys(memory.search('"the who"')) == ["the-who"]  # quoted: stop-words kept, exact phrase
    assert keys(memory.search('"at the stadium"')) == ["the-who"]
    assert keys(memory.search('"at the coffee"')) == []


def test_implied_words_do_not_change_what_is_found(memory):
    fill(memory)
    assert keys(memory.search("depl deploy")) == keys(memory.search("deploy"))
    assert keys(memory.search("prod production")) == keys(memory.search("production"))


def test_snippet_marks_matches():
    from deployments.memory.query import build_match, snippet

    assert (
        snippet("The production server is prod-3", build_match("prod serv"))
        == "The <<production>> <<server>> is <<prod>>-3"
    )
    long = " ".join(f"w{i}" for i in range(40)) + " target here"
    assert snippet(long, build_match("targ")).startswith("…") and "<<target>>" in snippet(long, build_match("targ"))


def test_no_memory_has_every_word_ranks_those_with_some(memory):
    """The code-health example: `header` is in no memory, so every-word matching finds nothing;
    the memories matching some of the words are ranked instead, and the result says so."""
    fill(memory)
    memory.save("api-version", "Public API responses carry X-API-Version; bump it only on breaking changes")
    memory.save("api-docs", "The API reference is generated from the OpenAPI document.")
    res = memory.search("breaking changes API version header")
    assert res["match"] == "any" and res["mode"] == "text"
    # more (and rarer) matched words rank higher: 4 words against 1
    assert keys(res) == ["api-version", "api-docs"]
    assert memory.search("breaking changes API version")["match"] == "all"
    assert keys(memory.search("breaking changes API version")) == ["api-version"]


def test_any_word_fallback_keeps_exclusions_pins_and_scope(memory):
    fill(memory)
    memory.save("deploy-other", "Deploy the other repo with tox", scope="repo:other")
    res = memory.search("deploy coffee -staging kubernetes")
    assert res["match"] == "any"
    assert "deploy-staging" not in keys(res) and "deploy-other" not in keys(res)
    assert set(keys(res)) == {"deploy-prod", "coffee"}
    memory.store.set_pinned("user", "coffee", True)
    assert keys(memory.search("deploy coffee -staging kubernetes"))[0] == "coffee"
    # nothing matches any word: an empty result that still says every word was required
    empty = memory.search("zzzz yyyy")
    assert empty["count"] == 0 and empty["match"] == "all"
    # a single word has no looser form
    assert memory.search("zzzz")["match"] == "all"


def test_any_word_fallback_in_hybrid_mode(tmp_path, embed_server):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url)
    fill(mem)
    res = mem.search("nightly backups header")
    assert res["mode"] == "hybrid" and res["match"] == "any"
    top = res["results"][0]
    assert top["key"] == "db-backup" and top["text_score"] is not None


def test_loosened_query_puts_memories_with_every_known_word_first(memory, monkeypatch):
    """A word no memory has is dropped first: the memories with all the other words come first, exactly
    (even past the candidate cap), then the memories with any of the words fill the list."""
    from deployments.memory import service as service_mod
    from deployments.memory import store as store_mod

    monkeypatch.setattr(store_mod, "CANDIDATES", 5)
    monkeypatch.setattr(service_mod, "ANY_CANDIDATES", 5)
    memory.store.save("user", "exact", "alpha beta gamma notes", detect_conflicts=False)
    for i in range(20):
        memory.store.save("user", f"alpha-{i}", f"alpha alpha note number {i}", detect_conflicts=False)
    res = memory.search("alpha beta gamma qqqunknown", 8)
    assert res["match"] == "any"
    # `exact` is older than the 5 newest `alpha` matches (the caps) but comes first; the any-word
    # stage ranks its 5 candidates (equal BM25: newest first)
    assert keys(res) == ["exact", *(f"alpha-{i}" for i in range(19, 14, -1))]
    # two OR groups: no AND stage, any word of either group
    monkeypatch.setattr(service_mod, "ANY_CANDIDATES", 1000)
    res = memory.search("gamma qqq OR number yyy", 50)
    assert res["match"] == "any" and "exact" in keys(res) and "alpha-3" in keys(res)


def test_any_word_stage_counts_pinned_only_among_its_candidates(memory):
    """The any-word stage skips the walk over older matches for pinned ones (README, "Search and ranking")."""
    from deployments.memory.query import build_match

    memory.store.save("user", "old-pinned", "alpha from long ago", detect_conflicts=False)
    memory.store.set_pinned("user", "old-pinned", True)
    for i in range(10):
        memory.store.save("user", f"new-{i}", f"alpha number {i}", detect_conflicts=False)
    match = build_match("alpha")
    full = [r["key"] for r in memory.store.text_search("user", match, 3, candidates=5)]
    assert full[0] == "old-pinned"
    capped = [r["key"] for r in memory.store.text_search("user", match, 3, candidates=5, older_pinned=False)]
    assert "old-pinned" not in capped and len(capped) == 3
