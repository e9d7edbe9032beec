"""`rayfleet-ignore`: generate and check on a real git repository, and the pre-commit hook entry."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from deployments.ignore_gen.cli import EXIT_MISSING, EXIT_OK, EXIT_USAGE, main, repo_tree
from tests.conftest import ROOT


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A Python project under git: tracked sources, one untracked build output nobody ignores yet."""
    for name in ("pyproject.toml", "src/app/__init__.py", "src/app/core.py", "tests/test_core.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    (tmp_path / "src/app/__pycache__").mkdir()
    (tmp_path / "src/app/__pycache__/core.cpython-311.pyc").write_bytes(b"\0")
    return tmp_path


def test_the_tree_is_what_git_sees_tracked_and_not_yet_ignored(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "debug.log").write_text("")
    tree = repo_tree(repo)
    assert "src/app/core.py" in tree and "src/app/__pycache__/core.cpython-311.pyc" in tree
    assert "debug.log" not in tree and not any(p.startswith(".git/") for p in tree)


def test_outside_git_the_folder_is_walked(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("")
    (tmp_path / ".git").mkdir()  # a stray folder named .git is still skipped
    (tmp_path / ".git" / "HEAD").write_text("")
    assert repo_tree(tmp_path) == ["go.mod"]


def test_generate_prints_the_rules_for_the_repository(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--repo", str(repo), "--no-comments"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert "__pycache__/" in lines
    assert not any(line.startswith("#") for line in lines)


def test_check_fails_and_names_what_the_gitignore_misses(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    assert main(["check", "--repo", str(repo)]) == EXIT_MISSING
    missing = capsys.readouterr().out.splitlines()
    assert "__pycache__/" in missing and "*.log" not in missing


def test_check_passes_once_the_generated_file_is_in_place(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--repo", str(repo), "-o", str(repo / ".gitignore")]) == EXIT_OK
    assert main(["check", "--repo", str(repo)]) == EXIT_OK
    assert capsys.readouterr().out == ""


def test_broader_globs_of_the_existing_file_count_as_covering(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["generate", "--repo", str(repo), "--no-comments", "-o", str(repo / "generated")])
    patterns = (repo / "generated").read_text().splitlines()
    assert "*.py[cod]" in patterns
    without = [p for p in patterns if p != "*.py[cod]"]
    (repo / ".gitignore").write_text("\n".join(without) + "\n")
    assert main(["check", "--repo", str(repo)]) == EXIT_MISSING
    assert capsys.readouterr().out.splitlines() == ["*.py[cod]"]
    for cover in (["*.pyc", "*.pyo", "*.pyd"], ["*.py?"]):  # the same files, other spellings
        (repo / ".gitignore").write_text("\n".join(without + cover) + "\n")
        assert main(["check", "--repo", str(repo)]) == EXIT_OK, cover


def test_an_unknown_feature_or_folder_is_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--repo", str(tmp_path), "--features", "cobol-on-mars"]) == EXIT_USAGE
    assert "cobol-on-mars" in capsys.readouterr().err
    assert main(["check", "--repo", str(tmp_path / "nowhere")]) == EXIT_USAGE
    assert "no such folder" in capsys.readouterr().err
    assert main(["frobnicate"]) == EXIT_USAGE


def test_the_command_runs_as_a_module_with_its_exit_code(repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "deployments.ignore_gen.cli", "check", "--repo", str(repo)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == EXIT_MISSING and "__pycache__/" in done.stdout.splitlines()


def test_the_pre_commit_hook_runs_the_installed_command() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    (hook,) = [h for h in hooks if h["id"] == "rayfleet-ignore-check"]
    command, *args = hook["entry"].split()
    assert scripts[command] == "deployments.ignore_gen.cli:main"
    assert args == ["check"] and hook["pass_filenames"] is False
