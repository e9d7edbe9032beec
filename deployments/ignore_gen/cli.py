"""`rayfleet-ignore`: the generator on the command line and as a pre-commit hook.

    rayfleet-ignore generate [--repo DIR] [--features a,b] [--extra PATTERN] [-o FILE]
    rayfleet-ignore check    [--repo DIR] [--against FILE]
    rayfleet-ignore features

It runs the same engine as the HTTP service, in-process, with no server. The tree is what git
would see: the tracked files plus the untracked ones that no ignore rule covers yet (`git
ls-files --cached --others --exclude-standard`), so a build output nobody ignores yet counts;
outside a git work tree the folder is walked. `check` compares the repository's own
`.gitignore` with what the generator would write: exit 1 and the missing patterns when the file
lacks any (patterns its broader globs already cover are not missing), exit 0 otherwise.
Exit 2 is bad usage (an unknown feature, a missing folder).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from deployments.ignore_gen.engine import Engine, Options, UnknownFeatureError
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates

EXIT_OK, EXIT_MISSING, EXIT_USAGE = 0, 1, 2
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


class UsageError(Exception):
    """Bad usage: printed on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def repo_tree(repo: Path) -> list[str]:
    """The paths, relative to `repo`, the generator fingerprints (see the module docstring)."""
    if not repo.is_dir():
        raise UsageError(f"{repo}: no such folder")
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
    )
    if listed.returncode == 0:
        return sorted({p for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p})
    paths: list[str] = []
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        base = Path(folder).relative_to(repo)
        paths.extend((base / name).as_posix() for name in files)
    return sorted(paths)


def _engine() -> Engine:
    return Engine(load_templates(None), load_rules_table(None))


def _features(value: str | None) -> list[str] | None:
    return [f.strip() for f in value.split(",") if f.strip()] if value else None


def _generate(args: argparse.Namespace, engine: Engine) -> int:
    tree = None if args.features and args.no_tree else repo_tree(args.repo)
    options = Options(include_comments=not args.no_comments, extras=tuple(args.extra))
    content = engine.generate(tree, _features(args.features), options).content
    if args.output:
        Path(args.output).write_text(content)
    else:
        sys.stdout.write(content)
    return EXIT_OK


def _check(args: argparse.Namespace, engine: Engine) -> int:
    against = Path(args.against) if args.against else args.repo / ".gitignore"
    existing = against.read_text(errors="replace") if against.is_file() else ""
    diff = engine.diff(existing, repo_tree(args.repo), _features(args.features), Options(extras=tuple(args.extra)))
    if not diff.added:
        print(f"{against}: ignores everything the generator would", file=sys.stderr)
        return EXIT_OK
    print(f"{against} misses {len(diff.added)} pattern(s) the generator would write:", file=sys.stderr)
    for pattern in diff.added:
        print(pattern)
    return EXIT_MISSING


def _list_features(_args: argparse.Namespace, engine: Engine) -> int:
    print("\n".join(engine.known_features()))
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="rayfleet-ignore", description="Generate and check .gitignore files from a repository's tree.")
    commands = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, run, text in (
        ("generate", _generate, "print the ignore file the generator would write"),
        ("check", _check, "exit 1 when the repository's .gitignore misses what the generator would ignore"),
    ):
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument("--repo", type=Path, default=Path("."), help="the repository (default: .)")
        sub.add_argument("--features", help="features to add, comma-separated (see `features`)")
        sub.add_argument("--extra", action="append", default=[], help="a pattern of your own (repeatable)")
        sub.set_defaults(run=run)
        if name == "generate":
            sub.add_argument("-o", "--output", help="write here instead of stdout")
            sub.add_argument("--no-comments", action="store_true", help="patterns only")
            sub.add_argument("--no-tree", action="store_true", help="only the --features, no fingerprinting")
        else:
            sub.add_argument("--against", help="the ignore file to check (default: REPO/.gitignore)")
    commands.add_parser("features", help="list the known features").set_defaults(run=_list_features)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        return int(args.run(args, _engine()))
    except UsageError as exc:
        print(f"rayfleet-ignore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except UnknownFeatureError as exc:
        print(f"rayfleet-ignore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `rayfleet-ignore generate | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
