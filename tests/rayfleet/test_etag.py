"""Tier 1: the one If-None-Match parser (RFC 9110 §13.1.2: `*` or a list of entity tags, weak comparison)."""

from __future__ import annotations

import pytest

from rayfleet.etag import none_match, quote


def test_quote_makes_a_strong_entity_tag() -> None:
    assert quote("abc") == '"abc"'


@pytest.mark.parametrize(
    "header",
    [
        '"abc"',
        'W/"abc"',  # weak comparison: a weak tag matches the same opaque tag
        '"x", "abc"',
        '"x",W/"abc"',
        '  "x" ,  "abc"  ',
        '"a,b", "abc"',  # a comma inside quotes belongs to the tag before
        '"x, y, z" ,W/"abc"',
        ',,"abc",,',  # empty list elements are allowed (RFC 9110 §5.6.1)
        "*",
        "  *  ",
    ],
)
def test_matches(header: str) -> None:
    assert none_match(header, "abc")


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        '"ab"',
        '"abcd"',
        'W/"x"',
        '"old, *, tag"',  # one opaque tag containing `*`, not the wildcard
        '"abc, x"',  # one tag whose text starts with the current tag
        '"x", *',  # `*` is only a wildcard as the whole field
        '"unterminated',
        'W/"abc',
    ],
)
def test_does_not_match(header: str | None) -> None:
    assert not none_match(header, "abc")


def test_a_tag_with_a_comma_matches_itself() -> None:
    assert none_match('"x", "a,b"', "a,b")
    assert none_match('W/"a,b"', "a,b")
    assert not none_match('"a", "b"', "a,b")
