"""Generated files checked with real git against real repositories' trees.

Oracle: a repository's tracked files are, by definition, not ignored by its
own ignore files, so a generated file must not ignore any of them either.
Exceptions, each explicit:

* SECRET patterns: `secrets` is always on (spec), and several projects commit
  test keys or demo `.env` files on purpose; with a generated file those need
  `git add -f`, which is the point of the rule.
* FORCE-ADDED files: the repository's own rules ignore them too (the file is
  tracked only because it was force-added or predates the rule).
* FIXTURE_RULES: a dependency folder committed as a test fixture that the
  repository re-includes with an explicit negation of its own.
* ACCIDENTAL: OS junk that is never committed on purpose.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deployments.ignore_gen.engine import Engine, Options
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen import gitcheck
from tests.deployments.ignore_gen.corpus import record, records

pytestmark = pytest.mark.usefixtures("both_passes")  # the compiled passes and their Python twins

FIXTURE_RULES = {"node_modules/": "fixture packages that the repository re-includes with its own negation"}
ACCIDENTAL = {".DS_Store", "Thumbs.db", "Desktop.ini"}


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_templates(), load_rules_table())


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _own_matches(tmp: Path, rec: dict, paths: list[str]) -> dict[str, gitcheck.Match]:
    """For each path, the repository's own last matching rule on it or on a parent folder."""
    root = tmp / "own"
    gitcheck.init_repo(root)
    gitcheck.write_ignores(root, rec["gitignores"])
    queries = sorted({q for p in paths for q in [p, *_ancestors(p)]})
    found = gitcheck.check(root, queries)
    result = {}
    for p in paths:
        for q in [p, *reversed(_ancestors(p))]:
            if q in found:
                result[p] = found[q]
                break
    return result


def test_no_corpus_repository_has_a_committed_file_ignored(engine: Engine, tmp_path: Path) -> None:
    secret_patterns = set(engine.templates.patterns["secrets"])
    violations: list[str] = []
    excused: dict[str, list[str]] = {"secrets": [], "force-added": [], "fixture": []}
    checked = 0
    for index, rec in enumerate(records()):
        generated = engine.generate(rec["files"], None, Options(include_comments=False))
        work = tmp_path / str(index)
        gitcheck.init_repo(work / "gen")
        (work / "gen" / ".gitignore").write_text(generated.content)
        hits = gitcheck.ignored(work / "gen", rec["files"])
        checked += len(rec["files"])
        own = _own_matches(work, rec, sorted(hits)) if hits else {}
        for path, match in sorted(hits.items()):
            if match.pattern in secret_patterns:
                excused["secrets"].append(path)
            elif path in own and not own[path].negated:
                excused["force-added"].append(f"{rec['repo']}: {path}")
            elif match.pattern in FIXTURE_RULES and path in own and own[path].negated:
                excused["fixture"].append(f"{rec['repo']}: {path}")
            elif match.pattern in ACCIDENTAL:
                continue
            else:
                violations.append(f"{rec['repo']}: {path} ignored by {match.pattern!r}")
    assert checked > 25_000
    assert violations == []
    # vite's node_modules fixtures, the one case the repository's own rules re-include, are now
    # kept by the generated file itself (engine.keep): no non-secret exception remains
    assert excused["force-added"] + excused["fixture"] == []


def _materialise(root: Path, files: list[str]) -> None:
    for rel in files:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()


BUILD_OUTPUTS = {
    "Textualize/rich": [
        "__pycache__/m.cpython-311.pyc",
        "rich/__pycache__/console.cpython-311.pyc",
        ".venv/bin/python",
        "dist/rich-14.0.0-py3-none-any.whl",
        "rich.egg-info/PKG-INFO",
        ".pytest_cache/v/cache/nodeids",
        ".mypy_cache/3.11/x.json",
        "htmlcov/index.html",
    ],
    "BurntSushi/ripgrep": ["target/debug/rg", "target/release/build/x/out/y.rs", "src/lib.rs.bk"],
    "expressjs/express": [
        "node_modules/x/index.js",
        "node_modules/.package-lock.json",
        "coverage/lcov.info",
        "npm-debug.log",
        ".eslintcache",
    ],
    "apache/commons-lang": [
        "target/classes/org/A.class",
        "target/surefire-reports/x.txt",
        "Foo.class",
        "release.properties",
    ],
    "spf13/cobra": ["coverage.out", "cobra.test"],
}
SECRETS = [
    ".env",
    ".env.local",
    "config/.env.production",
    "certs/server.key",
    "deploy/tls.pem",
    "keys/id_rsa",
    "signing/release.jks",
    "store.p12",
]


@pytest.mark.parametrize("repo", sorted(BUILD_OUTPUTS))
def test_materialised_repository(repo: str, engine: Engine, tmp_path: Path) -> None:
    """Real files in a real git repository: `git add -A` keeps every committed
    file and leaves the build outputs and secrets out."""
    rec = record(repo)
    root = tmp_path / "repo"
    gitcheck.init_repo(root)
    generated = engine.generate(rec["files"], None, Options())
    (root / ".gitignore").write_text(generated.content)
    outputs = BUILD_OUTPUTS[repo]
    _materialise(root, rec["files"] + outputs + SECRETS)
    git = gitcheck.require_git()
    subprocess.run([git, "-C", str(root), "add", "-A"], check=True)
    staged = set(
        subprocess.run([git, "-C", str(root), "ls-files", "-z"], check=True, capture_output=True)
        .stdout.decode()
        .split("\0")
    ) - {""}
    missing = sorted(set(rec["files"]) - staged)
    assert missing == []
    assert not staged & set(outputs + SECRETS)
    ignored = gitcheck.check(root, outputs + SECRETS, index=True)
    assert sorted(p for p, m in ignored.items() if not m.negated) == sorted(outputs + SECRETS)
    # .env.example stays committable
    assert ".env.example" not in gitcheck.ignored(root, [".env.example"])
