"""The FTS query builder: any user text gives a valid expression with the documented meaning."""

from __future__ import annotations

import random
import sqlite3

import pytest

from deployments.memory.query import build_any_match, build_match, content_tokens, relaxed_matches, words


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    for body in [
        "deploy the prod-3 server with make deploy",
        "staging server is stage-1",
        "café opening hours: 9 to 5",
        "NEAR AND OR NOT are words here",
    ]:
        conn.execute("INSERT INTO t VALUES (?)", (body,))
    return conn


def hits(conn: sqlite3.Connection, text: str) -> list[str]:
    expr = build_match(text)
    if expr is None:
        return []
    return [r[0] for r in conn.execute("SELECT body FROM t WHERE t MATCH ? ORDER BY rowid", (expr,))]


def test_words_in_any_order_with_prefixes(fts):
    assert hits(fts, "serv depl") == ["deploy the prod-3 server with make deploy"]
    assert hits(fts, "server") == ["deploy the prod-3 server with make deploy", "staging server is stage-1"]


def test_punctuated_chunk_is_a_phrase(fts):
    assert hits(fts, "prod-3") == ["deploy the prod-3 server with make deploy"]
    assert hits(fts, "stage-3") == []


def test_quoted_phrase_is_exact(fts):
    assert hits(fts, '"staging server"') == ["staging server is stage-1"]
    assert hits(fts, '"server staging"') == []
    assert hits(fts, '"stag serv"') == []  # no prefix inside quotes


def test_or_and_negation(fts):
    assert len(hits(fts, "café OR staging")) == 2
    assert hits(fts, "server -staging") == ["deploy the prod-3 server with make deploy"]
    assert hits(fts, "-staging") == []  # nothing positive to search


def test_diacritics_and_operators_are_text(fts):
    assert hits(fts, "cafe") == ["café opening hours: 9 to 5"]
    assert hits(fts, "NEAR AND") == ["NEAR AND OR NOT are words here"]
    assert build_match("   ") is None and build_match("!!! ??? ***") is None


def test_any_text_never_breaks_fts(fts):
    rng = random.Random(7)
    alphabet = "abc XYZ\"*^():-+{}[]'\\/,.;NEAR AND OR NOT é漢字\t\n_0123"
    samples = [
        '"',
        '""',
        '"unterminated',
        'a"b"c',
        "body:deploy",
        "NEAR(a b)",
        "a* b^",
        "(",
        ")",
        "-",
        "--x",
        "OR",
        "OR OR",
        "a OR",
        "OR a",
        "NOT",
        "\x00",
        "'; DROP TABLE t; --",
    ]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(2000)]
    for text in samples:
        hits(fts, text)  # raises sqlite3.OperationalError if an expression were invalid


def test_tokens():
    assert words("Prod-3_server, Café!") == ["prod", "3", "server", "café"]
    assert content_tokens("The server is on the host") == {"server", "host"}


def test_bare_stopwords_are_dropped_when_another_term_remains(fts):
    assert build_match("the deploy") == build_match("deploy") == '"deploy"*'
    assert build_match("deploy with the server") == build_match("deploy server")
    assert hits(fts, "the deploy") == hits(fts, "deploy")
    # a query made only of stop-words keeps them all
    assert build_match("the") == '"the"*'
    assert build_match("to the") == '("to"* AND "the"*)'
    assert hits(fts, "with the") == ["deploy the prod-3 server with make deploy"]
    # quoted phrases keep their stop-words, and make a bare stop-word redundant
    assert build_match('"deploy the prod"') == '"deploy the prod"'
    assert build_match('the "deploy the prod"') == '"deploy the prod"'
    assert hits(fts, '"the server"') == []
    # only stop-words typed as one bare word go: a chunk like `the-end` is a phrase
    assert build_match("the-end deploy") == '("the end"* AND "deploy"*)'
    # each OR alternative is simplified alone; exclusions are never dropped
    assert build_match("the OR server") == '("the"* OR "server"*)'
    assert build_match("a server OR the staging") == '("server"* OR "staging"*)'
    assert build_match("server -the") == '"server"* NOT ("the"*)'


def test_implied_terms_are_dropped(fts):
    assert build_match("impo import") == build_match("import impo") == '"import"*'
    assert build_match("deploy deploy") == '"deploy"*'
    assert build_match("prod prod-3") == '"prod 3"*'  # "prod 3"* contains the word prod
    assert build_match('"deploy" deploy') == '"deploy"'  # the exact word implies its prefix
    assert build_match('"deploy" deployment') == '("deploy" AND "deployment"*)'  # not implied
    assert build_match("ser server-x") == '"server x"*'
    assert hits(fts, "serv server") == hits(fts, "server")


def any_hits(conn: sqlite3.Connection, text: str) -> list[str]:
    expr = build_any_match(text)
    assert expr is not None
    return [r[0] for r in conn.execute("SELECT body FROM t WHERE t MATCH ? ORDER BY rowid", (expr,))]


def test_any_match_accepts_a_memory_with_one_of_the_words(fts):
    assert hits(fts, "deploy staging") == []
    assert any_hits(fts, "deploy staging") == ["deploy the prod-3 server with make deploy", "staging server is stage-1"]
    # stop-words are not alternatives: `the` alone would match nearly everything
    assert any_hits(fts, "the staging nothinghere") == ["staging server is stage-1"]
    # exclusions still apply, and OR groups are flattened
    assert any_hits(fts, "server café -stage") == [
        "deploy the prod-3 server with make deploy",
        "café opening hours: 9 to 5",
    ]
    assert any_hits(fts, "opening zzz OR deploy yyy") == [
        "deploy the prod-3 server with make deploy",
        "café opening hours: 9 to 5",
    ]


def test_any_match_is_none_when_it_would_not_loosen_the_query():
    assert build_any_match("deploy") is None
    assert build_any_match("deploy OR staging") is None
    assert build_any_match("the deploy") is None  # `the` is dropped: one term left
    assert build_any_match("   ") is None
    assert build_any_match("deploy staging") == '("deploy"* OR "staging"*)'


def test_relaxed_matches_drop_words_found_nowhere_then_allow_any(fts):
    def exists(expr: str) -> bool:
        return fts.execute("SELECT 1 FROM t WHERE t MATCH ? LIMIT 1", (expr,)).fetchone() is not None

    assert relaxed_matches("deploy server zzz", exists) == [
        ('("deploy"* AND "server"*)', False),
        ('("deploy"* OR "server"*)', True),
    ]
    assert relaxed_matches("deploy staging", exists) == [('("deploy"* OR "staging"*)', True)]  # both words exist
    assert relaxed_matches("deploy zzz", exists) == [('"deploy"*', False)]
    assert relaxed_matches("deploy zzz -prod", exists) == [('"deploy"* NOT ("prod"*)', False)]
    assert relaxed_matches("deploy zzz OR staging yyy", exists) == [('("deploy"* OR "staging"*)', True)]
    assert relaxed_matches("zzz yyy", exists) == []
    assert relaxed_matches("deploy", exists) == []
