"""The matcher behind the kept-fixture pass says what real git says: for patterns of every
screen kind (extension, suffix, prefix, first folder, a literal run, none) and their
negations, `ignored_by` agrees with `git check-ignore` path by path, and `candidates` never
drops a path git ignores."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest

from deployments.ignore_gen.globs import Matcher, _compile, _needle
from tests.deployments.ignore_gen.gitcheck import ignored, init_repo, write_ignores

pytestmark = pytest.mark.usefixtures("both_passes")  # the compiled passes and their Python twins

PATTERNS = [
    "*.pyc",
    "*.py[cod]",
    "*$py.class",
    "npm-debug.log*",
    ".env.*",
    "!.env.example*",
    "*.sw?",
    ".*.sw[op]",
    "\\#*\\#",
    "*.ntvs*",
    "*[!x]q",
    "**/*.rs.bk",
    "/dist/*.whl",
    ".vscode/*",
    "!.vscode/settings.json",
    "build/",
    "/log/*.log",
    "fastlane/screenshots/**/*.png",
    "node_modules/",
    "!keep/node_modules/",
    "*.egg-info/",
    "[Dd]ebug/",
    "a?c/",
    "Thumbs.db",
    "**/logs",
    "docs/**/tmp/",
    "*/generated/",
    "!/src/build/",
]

FOLDERS = [
    "",
    "src/",
    "src/build/",
    "dist/",
    "pkg/dist/",
    ".vscode/",
    "log/",
    "app/log/",
    "fastlane/screenshots/en/",
    "keep/node_modules/",
    "web/node_modules/x/",
    "m.egg-info/",
    "Debug/",
    "lib/debug/",
    "abc/",
    "a/b/logs/",
    "docs/x/y/tmp/",
    "tests/generated/",
    "a/b/generated/",
]

NAMES = [
    "m.pyc",
    "m.pyo",
    "m.py",
    "m$py.class",
    "npm-debug.log.1",
    ".env.local",
    ".env.example",
    ".env",
    "a.swp",
    "Main.swift",
    ".x.swo",
    "#notes#",
    "a.ntvsxyz",
    "azq",
    "axq",
    "x.rs.bk",
    "w.whl",
    "settings.json",
    "tasks.json",
    "a.log",
    "shot.png",
    "Thumbs.db",
    "logs",
    "README.md",
]

TREE = [folder + name for folder, name in itertools.product(FOLDERS, NAMES)]


# Without the one path pattern whose first folder is a wildcard, folders that no path pattern
# can start like are decided by their segments alone (the matcher's fast path); with it,
# prefix by prefix.
PATTERN_LISTS = {"all": PATTERNS, "literal-first-folders": [p for p in PATTERNS if p != "*/generated/"]}


@pytest.fixture(scope="module", params=sorted(PATTERN_LISTS))
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], set[str]]:
    patterns = PATTERN_LISTS[request.param]
    root: Path = tmp_path_factory.mktemp("matcher")
    init_repo(root)
    write_ignores(root, {"": "\n".join(patterns) + "\n"})
    return patterns, set(ignored(root, TREE))


def test_the_tree_reaches_both_verdicts(case: tuple[list[str], set[str]]) -> None:
    _, git_verdicts = case
    assert 0.1 * len(TREE) < len(git_verdicts) < 0.9 * len(TREE)


def test_the_fast_path_is_taken_without_wildcard_first_folders() -> None:
    assert Matcher(PATTERN_LISTS["literal-first-folders"])._tables.path_firsts is not None
    assert Matcher(PATTERNS)._tables.path_firsts is None


def test_ignored_by_agrees_with_git(case: tuple[list[str], set[str]]) -> None:
    patterns, git_verdicts = case
    matcher = Matcher(patterns)
    ours = {path for path in TREE if matcher.ignored_by(path) is not None}
    assert sorted(ours - git_verdicts) == []
    assert sorted(git_verdicts - ours) == []


def test_candidates_keep_every_ignored_path(case: tuple[list[str], set[str]]) -> None:
    patterns, git_verdicts = case
    candidates = set(Matcher(patterns).candidates(TREE))
    assert git_verdicts <= candidates
    assert len(candidates) < len(TREE)  # the screens do drop paths


def test_shuffled_pattern_lists_decide_alike_when_order_does_not_matter() -> None:
    positive = [p for p in PATTERNS if not p.startswith("!")]
    reordered = list(reversed(positive))
    first, second = Matcher(positive), Matcher(reordered)
    assert [first.ignored_by(p) is None for p in TREE] == [second.ignored_by(p) is None for p in TREE]


@pytest.mark.parametrize("glob", ["*.sw?", ".*.sw[op]", "#*#", "*.ntvs*", "a\\*b*cd", "[]a]x*", "x[ab]y]zz*", "*[!x]q"])
def test_a_globs_literal_run_is_in_every_match(glob: str) -> None:
    """The screen's literal run (`_needle`) is sound: no string the glob's regex matches
    lacks it. Subjects are short random strings over the glob's own characters and the glob
    with each wildcard and class replaced at random (so many match), judged by the regex."""
    regex = _compile(glob).regex
    needle = _needle(glob)
    rng = random.Random(glob)
    alphabet = sorted(set(glob + "abq.#"))

    def pick(token: re.Match[str]) -> str:
        if token.group(1) is not None:
            return token.group(1)
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0 if token.group(0) == "*" else 1, 2)))

    matched = 0
    for _ in range(5_000):
        for subject in (
            re.sub(r"\\(.)|\[[^\]]*\]|\*|\?", pick, glob),
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))),
        ):
            if regex.fullmatch(subject):
                matched += 1
                assert needle in subject, (glob, needle, subject)
    assert matched > 0
