"""Precision and recall on the corpus split (made before tuning), judged by real git."""

from __future__ import annotations

import pytest

from deployments.ignore_gen.engine import KEPT_COMMENT, Engine, Options
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen import gitcheck
from tests.deployments.ignore_gen.precision import measure, split


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_templates(), load_rules_table())


@pytest.mark.parametrize("part", ["development", "held_out"])
def test_tracked_files_ignored_and_recall(engine: Engine, part: str) -> None:
    figures = measure(engine, split()[part])
    assert figures.tracked > 4000 and figures.outputs > 50
    assert figures.ignored_share <= 0.0025, figures.examples
    assert figures.recall >= 0.99, figures.missed


def test_the_split_is_disjoint_and_covers_the_corpus() -> None:
    parts = split()
    assert not set(parts["development"]) & set(parts["held_out"])
    assert len(parts["development"]) == 30 and len(parts["held_out"]) == 10


def test_tracked_fixtures_are_kept_but_secrets_in_tests_stay_ignored(engine: Engine, tmp_path) -> None:
    tree = [
        "package.json",
        "src/index.js",
        "tests/fixtures/app/node_modules/dep/dist/index.js",
        "tests/fixtures/app/node_modules/dep/package.json",
        "examples/site/dist/bundle.js",
        "tests/keys/server.pem",
        "tests/.env",
    ]
    result = engine.generate(tree, None, Options())
    kept = [r.pattern for r in result.rules if r.feature and r.feature.endswith(":kept")]
    assert "!/tests/fixtures/app/node_modules/" in kept and KEPT_COMMENT in result.content
    gitcheck.init_repo(tmp_path)
    (tmp_path / ".gitignore").write_text(result.content)
    built = ["node_modules/x/index.js", "dist/app.js", "tests/fixtures/app/node_modules/dep/.env"]
    ignored = gitcheck.ignored(tmp_path, tree + built)
    assert sorted(ignored) == sorted(["tests/keys/server.pem", "tests/.env", *built])


def test_a_path_with_glob_characters_is_kept_literally(engine: Engine, tmp_path) -> None:
    tree = ["package.json", "test/fixtures/[weird] *name?/node_modules/a.js"]
    result = engine.generate(tree, None, Options(include_comments=False))
    gitcheck.init_repo(tmp_path)
    (tmp_path / ".gitignore").write_text(result.content)
    assert gitcheck.ignored(tmp_path, [*tree, "test/fixtures/other/node_modules/a.js"]) == {
        "test/fixtures/other/node_modules/a.js": gitcheck.ignored(tmp_path, ["test/fixtures/other/node_modules/a.js"])[
            "test/fixtures/other/node_modules/a.js"
        ]
    }
