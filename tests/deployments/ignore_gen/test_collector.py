"""The garbage collector and a generation: the tree's columns (lists of str, as long as the tree)
are out of the collector's walks with the compiled passes, so a collection that a large tree's
generation starts walks its few young objects, not every row."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from deployments.ignore_gen import _fastpaths, passes
from deployments.ignore_gen.engine import Engine, Options
from deployments.ignore_gen.fingerprint import prepare
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen.trees import tree_of

ENGINE = Engine(load_templates(), load_rules_table())


class Tagged(str):
    """A str subclass: its instances have a `__dict__`, so a cycle can pass through them."""


def test_settle_untracks_a_list_of_only_str_and_int() -> None:
    values = ["a", "b", 3, "", True]
    assert gc.is_tracked(values)
    assert _fastpaths.settle(values) is True
    assert not gc.is_tracked(values)
    assert _fastpaths.settle([]) is True


@pytest.mark.parametrize("item", [[], ("a", []), Tagged("a"), None, 1.5])
def test_settle_keeps_a_list_that_a_cycle_could_pass_through(item: object) -> None:
    values = ["a", item]
    assert _fastpaths.settle(values) is False
    assert gc.is_tracked(values)


def test_settle_wants_a_list() -> None:
    with pytest.raises(TypeError):
        _fastpaths.settle(("a",))  # type: ignore[arg-type]


def test_the_compiled_columns_are_out_of_the_collectors_walks() -> None:
    assert passes.use_compiled(True)
    tree = prepare([*tree_of("corpus", 2_000), "tests/fixtures/node_modules/x/package.json"])
    columns = [tree.paths, tree.names, tree.folders, tree.tails, tree.folder_list, *tree.samples]
    assert all(columns[-3]) and len(tree.paths) == 2_001
    assert [gc.is_tracked(column) for column in columns] == [False] * len(columns)


def test_unnormalised_paths_are_settled_too() -> None:
    assert passes.use_compiled(True)
    tree = prepare(["./a\\b.py", "x//y/package.json"])
    assert tree.paths == ["a/b.py", "x/y/package.json"]
    assert not gc.is_tracked(tree.paths)


@pytest.fixture
def often() -> Iterator[None]:
    """Gen-0 collections every 50 net container allocations, as a large tree's generation
    meets them at the default threshold (700)."""
    before = gc.get_threshold()
    gc.set_threshold(50, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def test_collections_during_a_generation_walk_no_column(often: None) -> None:
    """At each collection a 20k-path generation starts, the young lists hold far fewer items
    than the tree has paths (before: paths, names, folders and extensions, 80k items)."""
    assert passes.use_compiled(True)
    tree = tree_of("corpus", 20_000)
    walked: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 0:
            walked.append(sum(len(o) for o in gc.get_objects(0) if type(o) is list))

    gc.collect()
    gc.callbacks.append(note)
    try:
        out = ENGINE.generate(tree, None, Options())
    finally:
        gc.callbacks.remove(note)
    assert out.content and walked, "no collection ran during the generation"
    assert max(walked) < 5_000, walked


def test_columns_of_str_subclass_paths_stay_tracked() -> None:
    """A path of a `str` subclass is kept as given in the sample column (and may be the name or
    folder): those lists, and the paths list, stay in the collector's walks."""
    paths: list[str] = [Tagged("tests/x.py"), "a/b.py"]
    columns = _fastpaths.tree_columns(paths, {}, {}, (), frozenset({"tests"}), (), ())
    samples = columns[7]
    assert samples[0] == ["tests/x.py"] and type(samples[0][0]) is Tagged
    assert gc.is_tracked(samples[0]) and gc.is_tracked(paths)


def test_the_paths_given_to_tree_columns_are_untracked_when_all_exact_str() -> None:
    paths = ["tests/x.py", "a/b.py"]
    columns = _fastpaths.tree_columns(paths, {}, {}, (), frozenset({"tests"}), (), ())
    assert not gc.is_tracked(paths)
    assert [gc.is_tracked(columns[k]) for k in (0, 1, 2, 3)] == [False] * 4
    assert [gc.is_tracked(column) for column in columns[7]] == [False] * 3
