"""`tree_scan` (`_fastpaths.c`), the pass a generation reads its tree with, against its twin
(`passes.py_tree_scan`, itself `tree_columns`' twin cut down): on generated trees of hostile
names (non-ASCII, spaces, `!`, `#`, `\\`, very deep folders, 100k paths), and through the whole
generator, whose output must not depend on which pass ran. A tree's per-row columns are made
only when something asks for them."""

from __future__ import annotations

import random

import pytest

from deployments.ignore_gen import _fastpaths, passes
from deployments.ignore_gen.engine import Engine, Options
from deployments.ignore_gen.fingerprint import _TAILS, _TEST_ENDS, _WATCH, MARKERS, SAMPLE_DIRS, prepare
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen.trees import tree_of

ENGINE = Engine(load_templates(), load_rules_table())
KEYS = (MARKERS, _TAILS, _WATCH, SAMPLE_DIRS, ("test",), _TEST_ENDS)

# Segments and names a hostile tree is made of: the words the pass looks for (in any case),
# characters a glob or a negation treats specially, non-ASCII ones (some lower-case to ASCII,
# some change length when lower-cased), NUL and lone surrogates.
_SEGMENTS = [
    "src", "Tests", "tests", "fixtures", "examples", "node_modules", "build", "dist", "vendor", "a b", "x!y",
    "#c", "back\\slash", "Ünï", "\u212aelvin", "İstanbul", "ß", "te\x00st", "\ud800", "mytests", "testing",
    "", ".", "..",
]  # fmt: skip
_NAMES = [
    "package.json", "PACKAGE.JSON", "Cargo.toml", "setup.py", "Dockerfile", "dockerfile.dev", "compose.yaml",
    "requirements-dev.txt", "rails", "application.rb", "a.py", "b.PYC", "c.log", "d.o", "e.class", "!important",
    "#notes#", "with space.js", "x\\y.ts", "naïve.rs", "\u212a.go", "nul\x00.c", "\udcff.py", ".env", ".py", "py",
    "Makefile", "x.", "k" * 300, "a" * 9 + ".py", "tsconfig.build.json",
]  # fmt: skip


def hostile_tree(size: int, seed: int, surrogates: bool = True) -> list[str]:
    """`size` paths of hostile segments and names, some very deep (400 segments), unsorted;
    without lone surrogates when asked (no UTF-8 file holds one: the API answers 422)."""
    rng = random.Random(seed)
    segments, names = (_SEGMENTS, _NAMES) if surrogates else (_encodable(_SEGMENTS), _encodable(_NAMES))
    tree = []
    for _ in range(size):
        depth = 400 if rng.random() < 0.002 else rng.randint(0, 6)
        folders = [rng.choice(segments) for _ in range(depth)]
        tree.append("/".join([*folders, rng.choice(names)]))
    return tree


def _encodable(words: list[str]) -> list[str]:
    return [w for w in words if not any(0xD800 <= ord(c) <= 0xDFFF for c in w)]


def _same_scan(paths: list[str]) -> None:
    compiled = _fastpaths.tree_scan(paths, *KEYS)
    twin = passes.py_tree_scan(paths, *KEYS)
    assert compiled == twin
    for mine, theirs in zip(compiled[:3], twin[:3], strict=True):
        assert list(mine.items()) == list(theirs.items())  # first seen first


@pytest.mark.parametrize("seed", range(4))
def test_tree_scan_matches_the_twin_on_hostile_trees(seed: int) -> None:
    tree = hostile_tree(3000, seed)
    for paths in (tree, sorted(tree), sorted(tree, reverse=True)):
        _same_scan(paths)


def test_tree_scan_matches_the_twin_on_100k_hostile_paths() -> None:
    _same_scan(sorted(hostile_tree(100_000, 7)))


@pytest.mark.parametrize(("kind", "size"), [("corpus", 10_000), ("synthetic", 10_000), ("corpus", 100_000)])
def test_tree_scan_matches_the_twin_on_the_bench_trees(kind: str, size: int) -> None:
    _same_scan(sorted(tree_of(kind, size)))


def _generated(tree: list[str], compiled: bool) -> tuple[str, dict[str, str]]:
    passes.use_compiled(compiled)
    try:
        out = ENGINE.generate(tree, None, Options(include_provenance=True))
    finally:
        passes.use_compiled(True)
    return out.content, dict(out.fingerprint.witnesses)


@pytest.mark.parametrize("seed", range(3))
def test_hostile_trees_generate_byte_identical_on_both_paths(seed: int) -> None:
    tree = hostile_tree(5000, seed, surrogates=False)
    compiled = _generated(tree, True)
    assert compiled == _generated(tree, False)
    assert ":kept" in compiled[0] or "!/" in compiled[0]  # the hostile sample folders did keep files


# One test per kind of hostile str: each must be read safely (no fixed buffer, no crash) and
# answered as the twin answers it.
HOSTILE_ROWS = {
    "lone surrogates": ["\ud800/tests/\udcff.py", "tests/\udfff", "\udbff\udc00/package.json"],
    "embedded NUL": ["a\x00b/package.json", "tests/\x00", "\x00/\x00.py", "x/setup.py\x00"],
    "a name longer than any key": ["tests/" + "p" * 5000 + ".json", "package.json" * 1000],
    "names shorter than a word": ["a", "t/b", "tests/c", ".", "/", "", "tests/"],
    "a 10 MB folder": ["src/" + "d/" * 5_000_000 + "tests/x.py", "src/" + "d/" * 5_000_000 + "y.py"],
    "a 10 MB name": ["tests/" + "n" * 10_000_000, "a" * 10_000_000 + ".go"],
    "non-ASCII that lowers to ASCII": ["\u212a/tests/\u212aelvin.PY", "\u212a/TESTS/Package.JSON", "k/tests/x"],
    "non-ASCII that changes length": ["İ/tests/İ.py", "ß/Tests/ẞ.rs", "ﬁ/test/ﬁle"],
    "unnormalised": ["./tests/a.py", "/tests/b.py", "tests//c.py", "tests/./d.py", "tests\\e.py"],
}


@pytest.mark.parametrize("name", sorted(HOSTILE_ROWS))
def test_hostile_rows_are_read_as_the_twin_reads_them(name: str) -> None:
    rows = HOSTILE_ROWS[name]
    for paths in (rows, sorted(rows), rows[::-1]):
        _same_scan(paths)
    assert _generated(rows, True) == _generated(rows, False)


def test_a_tree_makes_its_columns_only_when_asked() -> None:
    """A generation reads no column: the scan gives it what it needs. Asked, the columns are
    `tree_columns`' and untracked as before."""
    paths = tree_of("corpus", 2000)
    tree = prepare(paths)
    ENGINE.generate(paths, None, Options())
    assert "_columns" not in tree.__dict__
    full = passes.py_tree_columns(sorted(paths), {}, {}, (), frozenset(), (), ())
    assert (tree.names, tree.folders, tree.tails, tree.folder_list) == full[:4]
    assert "_columns" in tree.__dict__


def test_wrong_types_are_a_type_error() -> None:
    for bad in (
        lambda: _fastpaths.tree_scan(["a", b"b"], *KEYS),  # type: ignore[list-item]
        lambda: _fastpaths.tree_scan(["a", None], *KEYS),  # type: ignore[list-item]
        lambda: _fastpaths.tree_scan(("a",), *KEYS),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_scan(["a/b"], {}, 1, (), frozenset(), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_scan(["a"], {}, {}, ("a", b"b"), frozenset(), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_scan(["a"], {}, {}, (), {"a"}, (), ()),  # type: ignore[arg-type]
    ):
        with pytest.raises(TypeError):
            bad()
