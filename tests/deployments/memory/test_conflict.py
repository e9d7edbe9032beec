"""Auto-supersede on save, on real near-duplicate and non-duplicate pairs, with and without vectors."""

from __future__ import annotations

import pytest

from deployments.memory import conflict
from deployments.memory.query import content_tokens
from tests.deployments.memory.conftest import memory_with
from tests.deployments.memory.pairs import DUPLICATES, NON_DUPLICATES


@pytest.mark.parametrize("old,new", DUPLICATES)
def test_duplicate_supersedes(memory, old, new):
    memory.save("first", old)
    memory.save("unrelated", "The coffee machine on floor 2 needs descaling every month.")
    result = memory.save("second", new)
    assert result["superseded"] == "first"
    store = memory.store
    assert store.get("user", "first")["archived"] is True
    second = store.get("user", "second")
    assert second["links"]["out"] == [{"rel": "supersedes", "scope": "user", "key": "first"}]
    assert second["verified_at"] is not None
    assert store.get("user", "unrelated")["archived"] is False
    assert [r["key"] for r in store.list("user")] == ["second", "unrelated"]


@pytest.mark.parametrize("old,new", NON_DUPLICATES)
def test_non_duplicate_is_kept(memory, old, new):
    memory.save("first", old)
    result = memory.save("second", new)
    assert result["superseded"] is None
    assert memory.store.get("user", "first")["archived"] is False


@pytest.mark.parametrize("old,new", DUPLICATES[:3])
def test_duplicates_with_vectors(tmp_path, embed_server, old, new):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url)
    mem.save("first", old)
    result = mem.save("second", new)
    assert result["embedded"] is True and result["superseded"] == "first"


@pytest.mark.parametrize("old,new", NON_DUPLICATES)
def test_non_duplicates_with_vectors(tmp_path, embed_server, old, new):
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url)
    mem.save("first", old)
    assert mem.save("second", new)["superseded"] is None


def test_vector_rule_needs_word_overlap():
    """Identical vectors are not enough: the pair must also share most of its words."""
    same_vector = b"\x00\x00\x80\x3f"  # a 1-d unit vector: cosine 1.0
    monthly, weekly = content_tokens("The API key rotates monthly."), content_tokens("The API key rotates weekly.")
    assert conflict.jaccard(monthly, weekly) == pytest.approx(0.6)
    assert conflict.judge(monthly, weekly, same_vector, same_vector) is None
    close_a = content_tokens("Staging deploys run every Tuesday at 14:00 UTC via the pipeline")
    close_b = content_tokens("Staging deploys run each Tuesday at 14:00 UTC through the pipeline")
    assert conflict.COSINE_JACCARD_FLOOR <= conflict.jaccard(close_a, close_b) < conflict.JACCARD_MIN
    assert conflict.judge(close_a, close_b, None, None) is None
    verdict = conflict.judge(close_a, close_b, same_vector, same_vector)
    assert verdict is not None and verdict[0] == "cosine"


def test_pinned_is_never_archived(memory):
    old, new = DUPLICATES[0]
    memory.save("first", old)
    memory.store.set_pinned("user", "first", True)
    assert memory.save("second", new)["superseded"] is None
    assert memory.store.get("user", "first")["archived"] is False


def test_updating_an_existing_key_never_supersedes(memory):
    old, new = DUPLICATES[1]
    memory.save("first", old)
    memory.save("second", "something different about coffee")
    assert memory.save("second", new)["superseded"] is None
    assert memory.store.get("user", "first")["archived"] is False


def test_other_scopes_are_not_touched(memory):
    old, new = DUPLICATES[2]
    memory.save("first", old, scope="repo:a")
    assert memory.save("second", new, scope="repo:b")["superseded"] is None


def test_conflict_disable(tmp_path):
    mem = memory_with(tmp_path, MEM_CONFLICT_DISABLE="1")
    old, new = DUPLICATES[0]
    mem.save("first", old)
    assert mem.save("second", new)["superseded"] is None
    assert len(mem.store.list("user")) == 2


def test_most_similar_candidate_wins(memory):
    memory.save("close", "Run the test suite with pytest -x before pushing to main branch today.")
    memory.save("exact", "Always run the test suite with pytest -x before pushing to main.")
    result = memory.save("new", "Before pushing to main, always run the test suite with pytest -x.")
    assert result["superseded"] == "exact" and result["similarity"] == 1.0
    assert memory.store.get("user", "close")["archived"] is False
