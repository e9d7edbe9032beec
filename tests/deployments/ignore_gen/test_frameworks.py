"""Frameworks as features of their own: detected from their markers, judged by real git."""

from __future__ import annotations

from pathlib import Path

import pytest

from deployments.ignore_gen.engine import Engine, Options
from deployments.ignore_gen.fingerprint import fingerprint
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen import gitcheck


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_templates(), load_rules_table())


@pytest.mark.parametrize(
    ("tree", "framework", "witness"),
    [
        (["Gemfile", "bin/rails", "app/models/user.rb"], "rails", "bin/rails"),
        (["api/Gemfile", "api/config/application.rb"], "rails", "api/config/application.rb"),
        (["manage.py", "shop/settings.py"], "django", "manage.py"),
        (["composer.json", "artisan"], "laravel", "artisan"),
        (["package.json", "web/next.config.mjs"], "nextjs", "web/next.config.mjs"),
        (["package.json", "gatsby-config.ts"], "gatsby", "gatsby-config.ts"),
        (["hugo.toml", "content/_index.md"], "hugo", "hugo.toml"),
    ],
)
def test_a_framework_is_found_with_its_language(tree: list[str], framework: str, witness: str) -> None:
    found = fingerprint(tree).witnesses
    assert found[framework] == witness


@pytest.mark.parametrize("tree", [["mybin/rails"], ["bin/rails.md"], ["docs/rails/guide.md"], ["settings.py"]])
def test_names_that_only_look_like_a_marker_are_not_one(tree: list[str]) -> None:
    assert not {"rails", "django"} & set(fingerprint(tree).witnesses)


RAILS_TREE = [
    "Gemfile",
    "bin/rails",
    "config/application.rb",
    "config/credentials.yml.enc",
    "log/.keep",
    "tmp/.keep",
    "tmp/pids/.keep",
    "storage/.keep",
    "app/assets/builds/.keep",
]
RAILS_OUTPUTS = [
    "log/development.log",
    "tmp/cache/bootsnap/x",
    "tmp/pids/server.pid",
    "storage/ab/cd/blob",
    "public/assets/app-1a2b.css",
    "app/assets/builds/application.js",
    "config/master.key",
]


def test_rails_output_is_ignored_and_its_keep_files_stay(engine: Engine, tmp_path: Path) -> None:
    content = engine.generate(RAILS_TREE, None, Options()).content
    gitcheck.init_repo(tmp_path)
    gitcheck.write_ignores(tmp_path, {"": content})
    assert gitcheck.ignored(tmp_path, RAILS_TREE) == {}
    assert set(gitcheck.ignored(tmp_path, RAILS_OUTPUTS)) == set(RAILS_OUTPUTS)


def test_django_and_nextjs_outputs_are_ignored_and_their_sources_are_not(engine: Engine, tmp_path: Path) -> None:
    tree = [
        "manage.py",
        "shop/settings.py",
        "shop/migrations/0001_initial.py",
        "web/package.json",
        "web/next.config.mjs",
    ]
    content = engine.generate(tree, None, Options()).content
    gitcheck.init_repo(tmp_path)
    gitcheck.write_ignores(tmp_path, {"": content})
    outputs = [
        "db.sqlite3",
        "shop/local_settings.py",
        "staticfiles/admin/base.css",
        "web/.next/cache/x",
        "out/index.html",
    ]
    assert gitcheck.ignored(tmp_path, [*tree, "web/next-env.d.ts"]) == {}
    assert set(gitcheck.ignored(tmp_path, outputs)) == set(outputs)
