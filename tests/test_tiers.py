"""The tier tables of tests/conftest.py against the code they describe.

FIXTURE_MARKS and STARTER_MARKS mark the tests that need real servers (tier 2) so that
`make test-fast` (`-m "not e2e and not realserver"`) leaves them out. These checks read the
test sources (no server starts): every name in the tables exists, and every fixture or
helper under tests/ that starts a server is in a table or uses something that is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_MARKS, ROOT, STARTER_MARKS, TESTS, TIER3_OWN, starter_marks, work_unit

# third-party names among the starters (Playwright's entry points)
THIRD_PARTY = {"async_playwright", "sync_playwright"}
# a command line naming one of these, run by a helper under tests/, starts a tier-2 server
SERVER_BINARIES = re.compile(r"^(?:.*/)?(haproxy|squid|dnsmasq|chromium|sshd|redis-server|postgres|ray)$")
SPAWNERS = {"Popen", "run", "check_call", "check_output", "create_subprocess_exec", "call"}


@dataclass
class Func:
    name: str
    file: Path
    fixture: bool
    params: list[str]
    names: set[str] = field(default_factory=set)  # names and attributes the body refers to
    spawns_server: bool = False


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
        if isinstance(target, ast.Name) and target.id == "fixture":
            return True
    return False


def _spawns_server(node: ast.AST) -> bool:
    """A call of subprocess.Popen/run/... whose command line starts with a server binary."""
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in SPAWNERS:
            continue
        first = call.args[0]
        head = first.elts[0] if isinstance(first, (ast.List, ast.Tuple)) and first.elts else first
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and SERVER_BINARIES.match(head.value):
            return True
    return False


def _functions(path: Path) -> Iterator[Func]:
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            params = [a.arg for a in node.args.args + node.args.kwonlyargs]
            yield Func(node.name, path, _is_fixture(node), params, names, _spawns_server(node))
        elif isinstance(node, ast.ClassDef):
            # a class counts as one function: what its methods refer to
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            yield Func(node.name, path, False, [], names, _spawns_server(node))


def _sources() -> list[Path]:
    return [p for p in sorted(TESTS.rglob("*.py")) if "e2e" not in p.relative_to(TESTS).parts]


def _imports(path: Path) -> dict[str, Path]:
    """The names `path` imports from modules under tests/, with the file that defines each."""
    found: dict[str, Path] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tests":
            module = ROOT.joinpath(*node.module.split("."))
            file = module.with_suffix(".py") if module.with_suffix(".py").exists() else module / "__init__.py"
            found.update({alias.asname or alias.name: file for alias in node.names})
    return found


@cache
def funcs() -> list[Func]:
    """Every function and class of the test sources (read on first use, not at collection: every
    pytest process collects this file, and reading the sources costs seconds)."""
    return [f for path in _sources() for f in _functions(path)]


@cache
def imports() -> dict[Path, dict[str, Path]]:
    return {path: _imports(path) for path in _sources()}


@cache
def fixtures() -> list[Func]:
    return [f for f in funcs() if f.fixture]


def _key(f: Func) -> str:
    return f"{f.file.relative_to(TESTS).as_posix()}::{f.name}"


def _tabled(f: Func) -> bool:
    return f.name in FIXTURE_MARKS or _key(f) in FIXTURE_MARKS


def _visible(name: str, where: Path) -> list[Func]:
    """The fixtures called `name` a function of `where` can use (its file, then the conftests up)."""
    files = [where] + [d / "conftest.py" for d in [where.parent, *where.parent.parents] if d.is_relative_to(TESTS)]
    for file in files:
        found = [f for f in fixtures() if f.name == name and f.file == file]
        if found:
            return found
    return []


def _covered(f: Func, seen: frozenset[str] = frozenset()) -> bool:
    """`f` is in FIXTURE_MARKS, or uses (through its parameters) a fixture that is."""
    if _tabled(f):
        return True
    for param in f.params:
        for dep in _visible(param, f.file):
            if _key(dep) not in seen and _covered(dep, seen | {_key(f)}):
                return True
    return False


def _starts(f: Func, seen: frozenset[str] = frozenset()) -> bool:
    """`f` refers to a starter, or to a helper (of its own file, or imported from tests/) that does."""
    if f.names & STARTER_MARKS.keys() or f.spawns_server:
        return True
    helpers = [g for g in funcs() if g.name in f.names and not g.fixture and _key(g) not in seen]
    for other in helpers:
        if other.file in (f.file, imports()[f.file].get(other.name)) and _starts(other, seen | {_key(f)}):
            return True
    return False


@pytest.mark.parametrize("key", sorted(FIXTURE_MARKS))
def test_every_tabled_fixture_exists(key: str) -> None:
    if "::" in key:
        assert key in {_key(f) for f in fixtures()}, f"{key}: no such fixture under tests/"
        return
    defined = sorted({_key(f) for f in fixtures() if f.name == key})
    assert defined, f"{key}: no such fixture under tests/ (outside tests/e2e)"
    assert len(defined) == 1, f"{key} is defined in several places {defined}: qualify it as <file>::{key}"


@pytest.mark.parametrize("name", sorted(STARTER_MARKS))
def test_every_starter_exists(name: str) -> None:
    if name in THIRD_PARTY:
        return  # Playwright's own; tests/browser.py skips when it is missing
    pattern = re.compile(rf"^\s*(?:async\s+def|def|class)\s+{name}\b", re.M)
    roots = [ROOT / d for d in ("tests", "rayfleet", "actors", "deployments", "sims") if (ROOT / d).is_dir()]
    assert any(pattern.search(p.read_text()) for root in roots for p in root.rglob("*.py")), (
        f"{name} is in STARTER_MARKS but defined nowhere: rename or drop the entry"
    )


def test_every_fixture_that_starts_a_server_is_marked() -> None:
    unmarked = sorted(_key(f) for f in fixtures() if _starts(f) and not _covered(f))
    assert not unmarked, f"fixtures that start a server but are not in FIXTURE_MARKS: {unmarked}"


def test_every_helper_that_spawns_a_server_is_a_starter() -> None:
    spawning = sorted(_key(f) for f in funcs() if f.spawns_server and not f.fixture)
    missing = [k for k in spawning if k.split("::")[1] not in STARTER_MARKS]
    assert spawning, "the scan found no helper that spawns a server: has the check gone blind?"
    assert not missing, f"helpers that run a server binary but are not in STARTER_MARKS: {missing}"


def _ssh_helper() -> None:
    SimEnv  # type: ignore[name-defined]  # noqa: F821


def _calls_the_helper() -> None:
    _ssh_helper()


def _browses() -> None:
    async_playwright  # type: ignore[name-defined]  # noqa: F821


# through a dict, so that the test below does not itself name a starter (and get marked)
SAMPLES = {"ssh": _ssh_helper, "helper": _calls_the_helper, "browser": _browses}


def test_a_test_that_calls_a_starter_is_marked() -> None:
    assert starter_marks(SAMPLES["ssh"]) == {"realserver"}
    assert starter_marks(SAMPLES["helper"]) == {"realserver"}  # followed through helpers under tests/
    assert starter_marks(SAMPLES["browser"]) == {"realserver", "browser"}
    assert starter_marks(test_every_starter_exists) == set()


def test_the_fixture_check_sees_an_entry_go_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(FIXTURE_MARKS, "redis_url")
    unmarked = {_key(f) for f in fixtures() if _starts(f) and not _covered(f)}
    assert unmarked == {"conftest.py::redis_url"}


@pytest.mark.parametrize("path", TIER3_OWN)
def test_the_own_cluster_tests_never_start_the_session_cluster(path: str) -> None:
    """TIER3_OWN runs before the session cluster starts: a test there that used the `cluster` fixture
    would start it early and hold two clusters on the same two cores."""
    source = ROOT / path
    assert source.is_file(), f"{path} is gone: update TIER3_OWN"
    used = {param for func in _functions(source) if func.name.startswith("test") for param in func.params}
    assert not used & {"cluster", "serve_url", "http", "cluster_secrets"}, used


def test_tier3_is_one_work_unit_and_every_other_file_is_its_own() -> None:
    e2e = sorted(p.relative_to(ROOT).as_posix() for p in (TESTS / "e2e").glob("test_*.py"))
    assert {work_unit(path) for path in [*e2e, *TIER3_OWN]} == {"tier3"}
    assert work_unit("tests/deployments/asn/test_app.py") == "tests/deployments/asn/test_app.py"
