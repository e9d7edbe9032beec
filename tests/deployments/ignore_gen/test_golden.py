"""The generator's output is pinned: the content, rules and witnesses recorded in
tests/data/ignore_gen/golden.json for the corpus trees and synthetic trees (golden.py) do not
change when the generator's internals do."""

from __future__ import annotations

import json

import pytest

from deployments.ignore_gen.engine import Engine
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen.golden import GOLDEN, cases, summary

pytestmark = pytest.mark.usefixtures("both_passes")  # the compiled passes and their Python twins

ENGINE = Engine(load_templates(), load_rules_table())
RECORDED: dict[str, dict[str, object]] = json.loads(GOLDEN.read_text())
CASES = cases()


def test_every_case_is_recorded() -> None:
    assert sorted(CASES) == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_is_unchanged(name: str) -> None:
    tree, options = CASES[name]
    assert summary(ENGINE.generate(tree, None, options)) == RECORDED[name]


@pytest.mark.parametrize("name", ["hand:kept", "monorepo:1000", "corpus:vitejs/vite", "bench-corpus:10000"])
def test_order_of_the_tree_does_not_matter(name: str) -> None:
    tree, options = CASES[name]
    assert summary(ENGINE.generate(list(reversed(tree)), None, options)) == RECORDED[name]
