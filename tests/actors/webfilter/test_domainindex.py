"""A domain list's index, updated edit by edit, always equals the list computed from scratch (tier 1)."""

from __future__ import annotations

import random

from actors.webfilter.domainindex import MAX_CHANGES, DomainIndex, DomainMemo
from actors.webfilter.squidconf import dstdomain_entries

LABELS = ["a", "b", "c", "ads", "x-y"]


def _names(rng: random.Random, count: int) -> list[str]:
    """Names of 1-4 labels from a small alphabet: parents and subdomains of each other are common."""
    return ["".join(rng.choice(LABELS) + "." for _ in range(rng.randint(0, 3))) + "test" for _ in range(count)]


def _dotted(index: DomainIndex | None) -> list[str]:
    assert index is not None
    return ["." + name for name in index.kept_names]


def test_an_index_built_from_scratch_is_the_dstdomain_form() -> None:
    rules = ["b.a.test", "a.test", "c.test", "A.test", "*.w.test", "/^t[0-9]+\\./", "", "."]
    index = DomainIndex(rules)
    assert _dotted(index) == dstdomain_entries(["b.a.test", "a.test", "c.test", "A.test"]) == [".a.test", ".c.test"]
    assert index.pattern_rules == {"*.w.test", "/^t[0-9]+\\./"}


def test_adding_a_parent_covers_its_listed_subdomains_and_removing_it_uncovers_them() -> None:
    index = DomainIndex(["x.ads.test", "y.x.ads.test", "z.ads.test", "other.test"])
    assert _dotted(index) == [".other.test", ".x.ads.test", ".z.ads.test"]  # by the reversed name
    parent = index.derive([*index.rules, "ads.test"])
    assert _dotted(parent) == [".other.test", ".ads.test"]
    back = parent.derive(["x.ads.test", "y.x.ads.test", "z.ads.test", "other.test"])
    assert _dotted(back) == [".other.test", ".x.ads.test", ".z.ads.test"]
    assert _dotted(index) == [".other.test", ".x.ads.test", ".z.ads.test"]  # a derived index leaves its base as it was


def test_random_edits_match_the_list_computed_from_scratch() -> None:
    rng = random.Random(22)
    rules = sorted(set(_names(rng, 300)))
    index = DomainIndex(rules)
    for _ in range(300):
        rules = list(rules)
        for _ in range(rng.randint(1, 4)):
            if rules and rng.random() < 0.45:
                rules.pop(rng.randrange(len(rules)))
            else:
                rules.append(rng.choice([*_names(rng, 1), rng.choice(rules or ["a.test"]).upper() + "."]))
        derived = index.derive(rules)
        assert derived is not None
        index = derived
        assert _dotted(index) == dstdomain_entries(rules)
        assert all(index.covers(name) for name in index.kept_names)


def test_a_large_difference_is_built_from_scratch_and_gives_the_same_answer() -> None:
    rng = random.Random(5)
    first = [f"n{i}.test" for i in range(MAX_CHANGES)]
    second = [*_names(rng, 50), *(f"m{i}.{rng.choice(LABELS)}.test" for i in range(MAX_CHANGES))]
    assert DomainIndex(first).derive(second) is None
    memo = DomainMemo()
    memo.index(first)
    assert _dotted(memo.index(second)) == dstdomain_entries(second)
    assert _dotted(memo.index(first)) == dstdomain_entries(first)


def test_an_edited_list_replaces_the_index_it_was_derived_from() -> None:
    """One index a list, not one a version: 20 edits of a list leave one index in the memo."""
    memo = DomainMemo()
    rules = [f"d{i}.test" for i in range(MAX_CHANGES * 2)]
    for n in range(20):
        kept = set(memo.index([*rules, f"late{n}.test"]).kept_names)
        assert f"late{n}.test" in kept and f"late{n - 1}.test" not in kept and len(kept) == len(rules) + 1
    assert len(memo._indexes) == 1


def test_the_memo_answers_each_list_and_never_mixes_two_lists() -> None:
    memo = DomainMemo(size=2)
    black = [f"d{i}.test" for i in range(50)]
    white = ["ok.test"]
    assert [len(memo.index(rules).kept_names) for rules in (black, white, black)] == [50, 1, 50]
    black.append("new.test")  # the caller's list changes: the memo kept a copy of what it answered for
    assert "new.test" in memo.index(black).kept_names
    assert "new.test" not in memo.index(black[:-1]).kept_names
    assert memo.index(white).kept_names == ["ok.test"]
