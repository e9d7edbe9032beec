"""Offline miner: derive ignore rules that co-occur with features in real repositories.

    python -m deployments.ignore_gen.mine [--corpus PATH] [--out PATH]

The corpus is JSON lines of `{repo, files, gitignores, ...}` (tracked paths and
the text of every tracked .gitignore). For each repository the miner computes
the features the generator itself would detect, collects the repository's own
ignore patterns, and keeps a pattern for a feature set when:

* at least `min_repos` (2) distinct repositories with those features ignore it,
  so one project's private names (`redis-server`, `/issues/youtrack/`) never
  become rules for everybody;
* its support, the share of repositories with the features that ignore it, is
  at least `min_support` (0.5 for one feature, 0.6 for a pair): a rule must be
  the habit of most projects of that kind, not of a few;
* its lift, support divided by the share of all repositories that ignore it,
  is at least `min_lift` (1.5): the pattern must be tied to the feature.
  Universal habits (.DS_Store) have lift ~1 and are mined for `common` only:
  no feature may explain them (lift below `min_lift` for every feature) and
  `min_common_support` (0.25) of all repositories must share them;
* for a pair of features, at least `min_pair_repos` (3) repositories and a
  support `min_lift` times higher than either feature's alone: with a corpus
  this size two repositories sharing a stack prove nothing about the pair;
* it is not already in a template, nor covered by a template pattern
  (`*.pyc` by `*.py[cod]`): the templates are the reviewed baseline;
* it does not widen a folder the templates ignore only in part on purpose
  (`.idea`, `.vscode`: shared settings in them are committed), nor a folder of a tool
  whose settings teams commit to share them (`.claude`, `.devcontainer`, ...);
* it matches no manifest, lockfile or CI file (the fingerprint markers,
  .github, .gitlab-ci.yml, ...), and no folder name that is a source folder in
  some ecosystem (bin, lib, src, pkg, doc, ...): a few repositories cannot
  establish that such a name is an output everywhere;
* it ignores no tracked file of any corpus repository the rule would apply to,
  checked with real `git check-ignore`, except files the repository's own
  rules ignore too (tracked because they were force-added).

Only patterns without an inner slash are candidates: anything with a path
(`src/configs`, `docs/.vitepress/cache`) describes one repository's layout.
The output is the rules table the service loads (data only, no corpus text)
plus the evidence behind each rule.
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import hashlib
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from deployments.ignore_gen.fingerprint import ALWAYS, FIXTURE_DIRS, MARKERS, fingerprint
from deployments.ignore_gen.rules_table import RULES_TABLE_PATH, RuleEntry, table_version
from deployments.ignore_gen.templates import load_templates

# the project's copy of the corpus (40 public repositories' file lists and .gitignore texts)
# Folders of tools whose settings teams commit to share them (agent instructions, dev containers):
# a few repositories ignoring one prove nothing about the rest.
SHARED_TOOL_FOLDERS = frozenset({".claude", ".cursor", ".windsurf", ".devcontainer", ".husky", ".changeset"})
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "ignore_gen" / "corpus.jsonl.gz"

# Files a project commits whatever its stack: CI and repository configuration.
COMMITTED_NAMES = (
    ".github",
    ".gitlab-ci.yml",
    ".travis.yml",
    ".circleci",
    "jenkinsfile",
    "azure-pipelines.yml",
    ".gitignore",
    ".gitattributes",
    ".gitmodules",
    ".editorconfig",
    "readme.md",
    "license",
)
# Folder names that hold sources in at least one ecosystem (Rust src/bin,
# launcher scripts in bin/, Go pkg/, Ruby and Python lib/).
SOURCE_FOLDERS = frozenset(
    {
        "bin",
        "lib",
        "src",
        "pkg",
        "include",
        "vendor",
        "packages",
        "doc",
        "docs",
        "test",
        "tests",
        "scripts",
        "tools",
        "app",
        "source",
        "sources",
    }
)


@dataclass(frozen=True)
class Thresholds:
    min_repos: int = 2
    min_support: float = 0.5
    min_pair_support: float = 0.6
    min_pair_repos: int = 3
    min_lift: float = 1.5
    min_common_support: float = 0.25


class CorpusRecord(TypedDict):
    """One line of the corpus."""

    repo: str
    files: list[str]
    gitignores: dict[str, str]  # folder -> the text of its .gitignore


@dataclass
class Repo:
    name: str
    files: list[str]
    gitignores: dict[str, str]
    features: frozenset[str]
    patterns: dict[str, bool] = field(default_factory=dict)  # key -> seen only as a folder


def read_corpus(path: Path) -> Iterator[CorpusRecord]:
    """One repository a line (JSON); a `.gz` file is read through gzip."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def canonical(line: str) -> tuple[str, bool] | None:
    """(key, folder-only) for a generalisable pattern line, else None.

    `/x`, `**/x`, `x/`, `x/*`, `x/**` all become key `x`; negations, comments
    and patterns with an inner slash are not generalisable.
    """
    text = line.strip()
    if not text or text.startswith("#") or text.startswith("!"):
        return None
    folder = False
    for suffix in ("/**", "/*", "/"):
        if text.endswith(suffix):
            text, folder = text[: -len(suffix)], True
            break
    while text.startswith("**/"):
        text = text[3:]
    text = text.lstrip("/")
    if not text or "/" in text or text in ("*", "**", "."):
        return None
    return text, folder


def in_fixture(directory: str) -> bool:
    return any(part.lower() in FIXTURE_DIRS for part in directory.split("/") if part)


def load_repos(records: Iterable[CorpusRecord]) -> list[Repo]:
    repos: list[Repo] = []
    for record in records:
        features = frozenset(fingerprint(record["files"]).features) - set(ALWAYS)
        repo = Repo(record["repo"], list(record["files"]), dict(record["gitignores"]), features)
        for directory, text in record["gitignores"].items():
            if in_fixture(directory):
                continue
            for line in text.splitlines():
                parsed = canonical(line)
                if parsed is None:
                    continue
                key, folder = parsed
                repo.patterns[key] = repo.patterns.get(key, True) and folder
        repos.append(repo)
    return repos


def template_keys() -> tuple[set[str], list[str], set[str]]:
    """Canonical keys of every template pattern, the slash-free patterns, and the
    folders templates ignore only in part (`.idea/workspace.xml`, `.vscode/*`)."""
    keys: set[str] = set()
    plain: list[str] = []
    partial: set[str] = set()
    for patterns in load_templates().patterns.values():
        for pattern in patterns:
            parsed = canonical(pattern)
            keys.add(parsed[0] if parsed else pattern)
            if parsed and not pattern.startswith("!"):
                plain.append(parsed[0])
            inner = pattern.lstrip("!/")
            if "/" in inner.rstrip("/"):
                partial.add(inner.split("/", 1)[0])
    return keys, plain, partial


def _samples(key: str) -> list[str]:
    """Concrete names a glob key matches (wildcards as nothing, or as one letter)."""
    out = []
    for fill in ("", "x"):
        text = key.replace("**", fill).replace("*", fill).replace("?", "x")
        while "[" in text and "]" in text[text.index("[") :]:
            start = text.index("[")
            end = text.index("]", start)
            inner = text[start + 1 : end].lstrip("!^") or "x"
            text = text[:start] + inner[0] + text[end + 1 :]
        out.append(text)
    return out


def rejected_name(key: str, template_plain: Sequence[str], partial: Set[str] = frozenset()) -> str | None:
    """Why a key cannot become a rule before any repository is checked, or None."""
    if key in partial:
        return "templates ignore only part of this folder on purpose"
    if key.strip("/").lower() in SHARED_TOOL_FOLDERS:
        return "a tool folder teams commit on purpose"
    samples = _samples(key)
    lowered = [s.lower() for s in samples]
    if any(s in SOURCE_FOLDERS for s in lowered):
        return "a source folder in some ecosystem"
    names = list(MARKERS) + list(COMMITTED_NAMES)
    if any(fnmatch.fnmatchcase(name, key.lower()) for name in names) or any(s in names for s in lowered):
        return "matches a manifest, lockfile or CI file"
    if any(fnmatch.fnmatchcase(s, t) for s in samples for t in template_plain):
        return "already covered by a template pattern"
    return None


@dataclass(frozen=True)
class Candidate:
    features: tuple[str, ...]
    pattern: str
    repos: int
    support: float
    lift: float


CandidateKey = tuple[tuple[str, ...], str]
"""A candidate's (features, pattern)."""


def candidates(repos: Sequence[Repo], limits: Thresholds) -> list[Candidate]:
    total = len(repos)
    overall = Counter(k for r in repos for k in r.patterns)
    folder_only = {k: all(r.patterns[k] for r in repos if k in r.patterns) for k in overall}
    known, template_plain, partial = template_keys()
    blocked = {k for k in overall if rejected_name(k, template_plain, partial)}

    def emit(key: str) -> str:
        return key + "/" if folder_only[key] else key

    found: list[Candidate] = []
    groups: dict[tuple[str, ...], list[Repo]] = defaultdict(list)
    for repo in repos:
        for feature in repo.features:
            groups[(feature,)].append(repo)
        for pair in itertools.combinations(sorted(repo.features), 2):
            groups[pair].append(repo)
    single: dict[str, set[str]] = defaultdict(set)
    rates: dict[tuple[str, ...], dict[str, float]] = {}
    for feats, members in sorted(groups.items(), key=lambda kv: (len(kv[0]), kv[0])):
        counts = Counter(k for r in members for k in r.patterns)
        rates[feats] = {k: c / len(members) for k, c in counts.items()}
        is_pair = len(feats) == 2
        if len(members) < (limits.min_pair_repos if is_pair else limits.min_repos):
            continue
        bar = limits.min_pair_support if is_pair else limits.min_support
        for key, count in sorted(counts.items()):
            if key in known or key in blocked or count < limits.min_repos:
                continue
            support = count / len(members)
            if is_pair:
                if key in single[feats[0]] or key in single[feats[1]]:
                    continue
                alone = max(rates[(feats[0],)].get(key, 0.0), rates[(feats[1],)].get(key, 0.0))
                if support < limits.min_lift * alone:
                    continue
            lift = support / (overall[key] / total)
            if support >= bar and lift >= limits.min_lift:
                found.append(Candidate(feats, emit(key), count, round(support, 3), round(lift, 3)))
                if not is_pair:
                    single[feats[0]].add(key)
    # `common`: habits no feature explains (lift below the bar for every
    # feature with enough repositories), shared by a broad share of all.
    tied = {
        k
        for feats, r in rates.items()
        if len(feats) == 1 and len(groups[feats]) >= limits.min_repos
        for k, rate in r.items()
        if rate / (overall[k] / total) >= limits.min_lift
    }
    for key, count in sorted(overall.items()):
        if key in known or key in blocked or key in tied:
            continue
        support = count / total
        if count >= limits.min_repos and support >= limits.min_common_support:
            found.append(Candidate(("common",), emit(key), count, round(support, 3), 1.0))
    return found


def _git() -> str:
    git = shutil.which("git")
    if git is None:
        raise SystemExit("git is required: the miner checks candidates with git check-ignore")
    return git


def _check(root: Path, paths: Sequence[str]) -> dict[str, str]:
    """path -> last matching pattern (with `!` when it re-includes) for matched paths."""
    if not paths:
        return {}
    cmd = [_git(), "-C", str(root), "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n"]
    proc = subprocess.run(cmd, input=("\0".join(paths) + "\0").encode(), capture_output=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr.decode("utf-8", "replace"))
    fields = proc.stdout.decode("utf-8").split("\0")
    return {fields[i + 3]: fields[i + 2] for i in range(0, len(fields) - 3, 4) if fields[i]}


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def force_added(repo: Repo, paths: Sequence[str], work: Path) -> set[str]:
    """Paths that the repository's own ignore files ignore, directly or through a
    parent folder: tracked only because they were force-added."""
    root = work / "own"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([_git(), "init", "-q", str(root)], check=True)
    for directory, text in repo.gitignores.items():
        target = root / directory / ".gitignore"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    queries = {q for p in paths for q in [p, *_ancestors(p)]}
    matched = {q: pat for q, pat in _check(root, sorted(queries)).items() if not pat.startswith("!")}
    return {p for p in paths if any(q in matched for q in [p, *_ancestors(p)])}


def unsafe(cands: Sequence[Candidate], repos: Sequence[Repo]) -> dict[CandidateKey, str]:
    """Candidates that would ignore a tracked file of a repository they apply to."""
    bad: dict[CandidateKey, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        root = work / "gen"
        subprocess.run([_git(), "init", "-q", str(root)], check=True)
        for repo in repos:
            live = [c for c in cands if c.features == ("common",) or repo.features.issuperset(c.features)]
            while live:
                (root / ".gitignore").write_text("\n".join(c.pattern for c in live) + "\n")
                hits = {p: pat for p, pat in _check(root, repo.files).items() if not pat.startswith("!")}
                if not hits:
                    break
                excused = force_added(repo, sorted(hits), work)
                offending = {pat: p for p, pat in sorted(hits.items()) if p not in excused}
                if not offending:
                    break
                for c in live:
                    if c.pattern in offending:
                        bad[(c.features, c.pattern)] = f"{repo.name}: {offending[c.pattern]}"
                live = [c for c in live if c.pattern not in offending]
    return bad


def mine(records: Iterable[CorpusRecord], limits: Thresholds) -> tuple[list[Candidate], dict[CandidateKey, str], int]:
    repos = load_repos(records)
    cands = candidates(repos, limits)
    bad = unsafe(cands, repos)
    kept = [c for c in cands if (c.features, c.pattern) not in bad]
    return kept, bad, len(repos)


def build_output(kept: Sequence[Candidate], limits: Thresholds, corpus_sha: str, repos: int) -> dict[str, Any]:
    grouped: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for c in kept:
        grouped[c.features].append(c.pattern)
    entries = [RuleEntry(f, tuple(sorted(p))) for f, p in sorted(grouped.items())]
    return {
        "version": table_version(entries),
        "generated_by": "python -m deployments.ignore_gen.mine",
        "corpus": {"sha256": corpus_sha, "repositories": repos},
        "thresholds": limits.__dict__,
        "rules": [{"features": list(e.features), "patterns": list(e.patterns)} for e in entries],
        "evidence": [
            {"features": list(c.features), "pattern": c.pattern, "repos": c.repos, "support": c.support, "lift": c.lift}
            for c in sorted(kept, key=lambda c: (c.features, c.pattern))
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=Path, default=RULES_TABLE_PATH)
    parser.add_argument("--min-repos", type=int, default=Thresholds.min_repos)
    parser.add_argument("--min-support", type=float, default=Thresholds.min_support)
    parser.add_argument("--min-pair-support", type=float, default=Thresholds.min_pair_support)
    parser.add_argument("--min-pair-repos", type=int, default=Thresholds.min_pair_repos)
    parser.add_argument("--min-lift", type=float, default=Thresholds.min_lift)
    parser.add_argument("--min-common-support", type=float, default=Thresholds.min_common_support)
    args = parser.parse_args(argv)
    limits = Thresholds(
        args.min_repos,
        args.min_support,
        args.min_pair_support,
        args.min_pair_repos,
        args.min_lift,
        args.min_common_support,
    )
    if not args.corpus.exists():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    raw = args.corpus.read_bytes()
    # the content's hash, not the gzip container's (its header holds a timestamp)
    content = gzip.decompress(raw) if args.corpus.suffix == ".gz" else raw
    corpus_sha = "sha256:" + hashlib.sha256(content).hexdigest()
    kept, bad, count = mine(read_corpus(args.corpus), limits)
    output = build_output(kept, limits, corpus_sha, count)
    args.out.write_text(json.dumps(output, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for (features, pattern), why in sorted(bad.items()):
        print(f"rejected {'+'.join(features)}: {pattern}  (would ignore {why})", file=sys.stderr)
    print(f"{len(kept)} rules from {count} repositories -> {args.out} ({output['version']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
