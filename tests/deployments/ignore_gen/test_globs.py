"""Glob coverage: a pattern is covered only when the other patterns ignore every path it does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deployments.ignore_gen.engine import Engine, Options
from deployments.ignore_gen.globs import Coverage
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates


@pytest.mark.parametrize(
    "target, patterns, by",
    [
        ("*.pyc", ["*.py[cod]"], ["*.py[cod]"]),
        ("*.py[cod]", ["*.pyc", "*.pyo", "*.pyd"], ["*.pyc", "*.pyd", "*.pyo"]),
        ("/build/", ["build/"], ["build/"]),
        ("/build", ["build"], ["build"]),
        ("build/", ["build"], ["build"]),
        ("src/*.pyc", ["*.pyc"], ["*.pyc"]),
        ("**/node_modules", ["node_modules"], ["node_modules"]),
        ("foo.log", ["*.log"], ["*.log"]),
        ("debug-?.log", ["*.log"], ["*.log"]),
        ("cache/x.tmp", ["cache/*"], ["cache/*"]),
        ("*.egg-info/", ["*.egg-info/"], ["*.egg-info/"]),
        ("[Dd]ebug/", ["[Dd]ebug/"], ["[Dd]ebug/"]),
        ("Debug/", ["[Dd]ebug/"], ["[Dd]ebug/"]),
    ],
)
def test_covered(target: str, patterns: list[str], by: list[str]) -> None:
    assert Coverage(patterns).covering(target) == by


@pytest.mark.parametrize(
    "target, patterns",
    [
        ("*.py[cod]", ["*.pyc"]),  # .pyo and .pyd are not ignored
        ("*.pyc", ["*.py?x"]),
        ("build", ["build/"]),  # a file named build would not be ignored
        ("build", ["/build"]),  # build/ in a subfolder would not be ignored
        ("*.log", ["foo.log"]),
        ("*.log", ["?.log"]),  # `*` may be longer than one character
        ("cache/**", ["cache/*"]),  # `*` stops at a slash, `**` does not
        ("src/*.pyc", ["lib/*.pyc"]),
        ("**/a/b", ["a/b"]),  # anywhere vs at the root only
        ("*.tmp", ["[!a].tmp"]),
        ("!keep.me", ["keep.me"]),  # negations are only ever compared verbatim
        ("x[!a]y", ["xby"]),
    ],
)
def test_not_covered(target: str, patterns: list[str]) -> None:
    assert Coverage(patterns).covering(target) == []


def test_coverage_agrees_with_git(tmp_path: Path) -> None:
    """Every claimed coverage holds for real paths according to `git check-ignore`."""
    cases = [("*.pyc", "*.py[cod]"), ("/build/", "build/"), ("src/*.pyc", "*.pyc"), ("Debug/", "[Dd]ebug/")]
    paths = ["a.pyc", "src/b.pyc", "build/x", "sub/build/x", "Debug/y", "src/Debug/y", "c.pyo"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for target, cover in cases:
        assert Coverage([cover]).covering(target) == [cover]
        for pattern_set in ([target], [cover]):
            (tmp_path / ".gitignore").write_text("\n".join(pattern_set) + "\n")
            result = subprocess.run(
                ["git", "-C", str(tmp_path), "check-ignore", "--no-index", "--stdin"],
                input="\n".join(paths),
                capture_output=True,
                text=True,
            )
            ignored = set(result.stdout.split())
            if pattern_set == [target]:
                by_target = ignored
            else:
                assert by_target <= ignored, (target, cover, by_target - ignored)


def test_diff_reports_covered_added_removed() -> None:
    engine = Engine(load_templates(), load_rules_table())
    generated = {r.pattern for r in engine.generate(None, ["python"], Options()).rules}
    assert "*.py[cod]" in generated or "*.pyc" in generated
    existing = "*.pyc\n*.pyo\n*.pyd\n/build/\nmy-notes.txt\n# comment\n"
    diff = engine.diff(existing, None, ["python"], Options())
    sides = {(c.pattern, c.side) for c in diff.covered}
    assert "*.pyc" not in diff.removed and "my-notes.txt" in diff.removed
    if "*.py[cod]" in generated:
        assert ("*.pyc", "existing") in sides and ("*.py[cod]", "generated") in sides
        assert "*.py[cod]" not in diff.added
    if "build/" in generated:
        assert ("/build/", "existing") in sides
    assert not set(diff.added) & {c.pattern for c in diff.covered}
    assert set(diff.added) <= generated and set(diff.removed) <= {"*.pyc", "*.pyo", "*.pyd", "/build/", "my-notes.txt"}
