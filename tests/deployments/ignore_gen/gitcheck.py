"""Ask real git which paths an ignore file ignores (`git check-ignore --no-index`).

Paths need not exist: git matches names, and checks every leading directory,
exactly as it would for a working tree. Files under a folder that a rule
ignores are reported with that rule.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Match:
    source: str
    line: int
    pattern: str

    @property
    def negated(self) -> bool:
        return self.pattern.startswith("!")


def require_git() -> str:
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is required for the ignore-file checks")
    return git


def init_repo(root: Path) -> None:
    subprocess.run([require_git(), "init", "-q", str(root)], check=True)


def write_ignores(root: Path, files: Mapping[str, str]) -> None:
    """Write `.gitignore` files keyed by directory ('' is the root)."""
    for directory, text in files.items():
        target = root / directory / ".gitignore" if directory else root / ".gitignore"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def check(root: Path, paths: Iterable[str], *, index: bool = False) -> dict[str, Match]:
    """Last matching rule per path (a `!` pattern means re-included), for matched paths."""
    paths = list(paths)
    if not paths:
        return {}
    cmd = [require_git(), "-C", str(root), "check-ignore", "--stdin", "-z", "-v", "-n"]
    if not index:
        cmd.insert(4, "--no-index")
    data = "\0".join(paths) + "\0"
    proc = subprocess.run(cmd, input=data.encode("utf-8"), capture_output=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr.decode("utf-8", "replace"))
    fields = proc.stdout.decode("utf-8").split("\0")
    result: dict[str, Match] = {}
    for i in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[i : i + 4]
        if source:
            result[path] = Match(source, int(line), pattern)
    return result


def ignored(root: Path, paths: Iterable[str]) -> dict[str, Match]:
    """Paths the ignore files in `root` ignore (the last match is not a negation)."""
    return {p: m for p, m in check(root, paths).items() if not m.negated}
