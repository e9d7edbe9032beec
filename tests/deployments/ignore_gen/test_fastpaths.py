"""The compiled per-path passes (`_fastpaths.c`) give what their pure-Python twins
(`passes.py`) give, for any str: fuzzed with hypothesis (NUL, lone surrogates, non-ASCII case
rules, newlines), and on hostile trees (a 10 MB path, a million paths) through the whole
generator."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deployments.ignore_gen import _fastpaths, passes
from deployments.ignore_gen.engine import Engine, Options
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates

ENGINE = Engine(load_templates(), load_rules_table())

# Characters that matter to the passes (separators, dots, case), mixed with any code point,
# surrogates included (hypothesis leaves them out of text() unless asked).
_ANY = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
_CHARS = st.one_of(st.sampled_from(list("/./aAzZ_-\x00\n\\İßﬁΣ")), _ANY)
PATHS = st.lists(st.text(_CHARS, max_size=24), max_size=40)
WORDS = st.lists(st.text(_CHARS, max_size=4), max_size=5)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(PATHS, st.booleans())
def test_columns_match_the_python_twin(paths: list[str], lower: bool) -> None:
    compiled = _fastpaths.columns(paths, lower)
    assert compiled == passes.py_columns(paths, lower)
    for column in compiled:
        _str_hashes(column)


def _str_hashes(values: Iterable[str]) -> None:
    """Each str made in C carries str's own hash (a kept hash that differs breaks every set)."""
    for value in values:
        assert hash(value) == hash(value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass"))


SAMPLE_LIKE = (frozenset({"tests", "fixtures", "spec", "\ud800", ""}), ("test", "İ"), ("test", "tests", "ß"))


def _same_tree_columns(
    paths: list[str],
    name_keys: object,
    tail_keys: object,
    watch: tuple[str, ...],
    like: tuple[frozenset[str], tuple[str, ...], tuple[str, ...]] = SAMPLE_LIKE,
) -> None:
    """The C pass and the twin agree, the reported dicts in the same order too."""
    compiled = _fastpaths.tree_columns(paths, name_keys, tail_keys, watch, *like)  # type: ignore[arg-type]
    twin = passes.py_tree_columns(paths, name_keys, tail_keys, watch, *like)  # type: ignore[arg-type]
    assert compiled == twin
    for mine, theirs in zip(compiled[4:7], twin[4:7], strict=True):
        assert list(mine.items()) == list(theirs.items())
    scanned = _fastpaths.tree_scan(paths, name_keys, tail_keys, watch, *like)  # type: ignore[arg-type]
    assert scanned == twin[4:] == passes.py_tree_scan(paths, name_keys, tail_keys, watch, *like)  # type: ignore[arg-type]
    for mine, theirs in zip(scanned[:3], twin[4:7], strict=True):
        assert list(mine.items()) == list(theirs.items())
    _str_hashes(scanned[3][1] + scanned[3][2])
    names, folders, extensions, distinct, name_firsts, tail_firsts, watched, samples, clean = compiled
    seen = set(names)
    assert (names, folders) == passes.py_columns(paths, True)[:2]
    assert len(distinct) == len(set(distinct))  # no folder listed twice
    assert name_firsts == passes.py_first_rows(names, name_keys)  # type: ignore[arg-type]
    assert tail_firsts == passes.py_first_rows(extensions, tail_keys)  # type: ignore[arg-type]
    assert watched == {n: [at for at, m in enumerate(names) if m == n] for n in seen if n.startswith(watch)}
    picked = [p for p, f in zip(paths, folders, strict=True) if passes.py_holding_like([f], *like)]
    assert samples == (picked, *passes.py_columns(picked, False)[:2])
    assert clean == (
        not any(d in p for p in paths for d in ("\\", "//", "/./"))
        and not any(p.startswith(("/", "./")) for p in paths)
    )
    for column in (names, folders, extensions, distinct, *samples):
        _str_hashes(column)


@FUZZ
@given(PATHS, WORDS, WORDS, WORDS)
def test_tree_columns_match_the_python_twin(
    paths: list[str], name_words: list[str], tail_words: list[str], watch: list[str]
) -> None:
    names, _, extensions = passes.py_columns(paths, True)
    name_keys = dict.fromkeys(name_words + names[::3], ())  # some hits, some misses; a dict as MARKERS is
    tail_keys = frozenset(tail_words + extensions[1::3] + [""])
    prefixes = (*watch, *(name[:2] for name in names[::4]))
    _same_tree_columns(paths, name_keys, tail_keys, prefixes)
    segments = passes.py_segments(passes.py_columns(paths, True)[1])
    _same_tree_columns(paths, name_keys, tail_keys, prefixes, (frozenset(segments[::2]), tuple(watch), tuple(watch)))


TREE_HOSTILE = [
    ["a/b.py", "a/c", "A/.py", "x/py", "x/Makefile", "..py", "y.", ".", "", "b/", "/"],
    ["K/y.Tar.gz", "k/z.go", "K/w"],  # the Kelvin sign lowers to ASCII `k`: one folder `k/`
    ["é/a/B", "é/a/c", "a/é", "a/x", "é/a/d", "a/y.PY"],  # ASCII folder cut from a non-ASCII path
    ["a\x00b/package.json", "a\x00b/.x\x00y", "x/\udcff\udc80.py", "\ud800/t.rs", "\ud800/u.rs", "İ/Cargo.TOML"],
    ["src/" + "d/" * 200_000 + "x.py", "src/" + "d/" * 200_000 + "y", "s\udcff/" * 50_000 + "z.c"],
    ["." * 100_000, "a/" + "." * 100_000 + "py", "/" * 100_000],
]


@pytest.mark.parametrize("paths", TREE_HOSTILE, ids=range(len(TREE_HOSTILE)))
def test_tree_columns_match_the_python_twin_on_hostile_paths(paths: list[str]) -> None:
    name_keys = {"package.json": 1, "k": 1, "w": 1, "cargo.toml": 1, "x.py": 1, "b": 1, "é": 1}
    tail_keys = frozenset({"py", "gz", "go", "", "rs", "c", "toml", "\udcff\udc80.py"})
    watch = ("k", "y", "x", "", "\udcff", "cargo")
    for tree in (paths, sorted(paths), paths[::-1]):
        for keys in ((name_keys, tail_keys, watch), ({}, frozenset(), ())):
            _same_tree_columns(tree, *keys)
            _same_tree_columns(tree, *keys, (frozenset({"d", "a", "é"}), ("s",), ("k",)))


def test_tree_columns_extensions_follow_a_first_character() -> None:
    paths = ["a/B.PY", "py", ".py", "Makefile", "..py", "x.", "a/c", "b/Makefile", "c/x.PY"]
    names, _, extensions, distinct, name_firsts, tail_firsts, watched, samples, clean = _fastpaths.tree_columns(
        paths, {"makefile": 0, "c": 0, "nope": 0}, {"py": 0, "": 0}, ("ma", "x"), frozenset({"b"}), ("c",), ("a",)
    )
    assert extensions == ["py", "", "", "", "py", "", "", "", "py"]
    assert set(names) == {"b.py", "py", ".py", "makefile", "..py", "x.", "c", "x.py"}
    assert distinct == ["a/", "", "b/", "c/"]
    assert list(name_firsts.items()) == [("makefile", 3), ("c", 6)]
    assert list(tail_firsts.items()) == [("py", 0), ("", 1)]
    assert list(watched.items()) == [("makefile", [3, 7]), ("x.", [5]), ("x.py", [8])]
    assert samples == (
        ["a/B.PY", "a/c", "b/Makefile", "c/x.PY"],
        ["B.PY", "c", "Makefile", "x.PY"],
        ["a/", "a/", "b/", "c/"],
    )
    assert clean


@pytest.mark.parametrize(
    ("path", "clean"),
    [
        ("a/b", True),
        ("a\\b", False),
        ("/a", False),
        ("./a", False),
        ("a/./b", False),
        ("a//b", False),
        ("a/.b/c", True),
        ("a/../b", True),
        (".a/b", True),
        ("é//b", False),
        ("é/./b", False),
        ("é\\b", False),
        ("/é", False),
        ("./é", False),
        ("é/.x/b", True),
        ("\u212a//b", False),  # the Kelvin sign: lower-cases to ASCII
    ],
)
def test_tree_columns_say_whether_a_path_needs_normalising(path: str, clean: bool) -> None:
    for paths in ([path], ["a/x", path, "z/y"], [path, path]):
        _same_tree_columns(paths, {}, frozenset(), ())
        assert _fastpaths.tree_columns(paths, {}, frozenset(), (), frozenset(), (), ())[-1] is clean


class _Shrinking(str):
    """A key whose __eq__ empties the list being split (a hostile container cannot crash a pass)."""

    victim: list[str] = []

    def __eq__(self, other: object) -> bool:
        self.victim.clear()
        return False

    __hash__ = str.__hash__


def test_a_key_that_changes_the_paths_is_an_error_not_a_crash() -> None:
    paths = ["a/x", "a/y", "b/x", "c/z"]
    _Shrinking.victim = paths
    key = _Shrinking("x")
    with pytest.raises(RuntimeError):
        _fastpaths.tree_columns(paths, {key}, frozenset(), (), frozenset(), (), ())
    paths[:] = ["a/x", "a/y", "b/x", "c/z"]  # the scan asks such a key too (`in`), and checks the list on every row
    with pytest.raises(RuntimeError):
        _fastpaths.tree_scan(paths, {key}, frozenset(), (), frozenset(), (), ())
    values, column = ["1", "2", "3"], ["x", "y", "x"]
    _Shrinking.victim = values
    assert _fastpaths.pick(values, column, {_Shrinking("x")}) == []  # stops where the values end


@FUZZ
@given(PATHS, WORDS)
def test_segments_and_holding_match_the_python_twin(folders: list[str], words: list[str]) -> None:
    compiled = _fastpaths.segments(folders)
    assert compiled == passes.py_segments(folders)
    chosen = set(words) | set(compiled[::2])
    assert _fastpaths.holding(folders, chosen) == passes.py_holding(folders, chosen)


@FUZZ
@given(PATHS, WORDS, WORDS, WORDS)
def test_holding_like_matches_the_python_twin(
    folders: list[str], words: list[str], prefixes: list[str], suffixes: list[str]
) -> None:
    segments = passes.py_segments(folders)
    for exact in (frozenset(words), frozenset(words + segments[::3])):  # some hits, some misses
        args = (folders, exact, tuple(prefixes), tuple(suffixes))
        assert _fastpaths.holding_like(*args) == passes.py_holding_like(*args)


DEEP = "d/" * 200_000  # a 400 kB folder of 200,001 segments
HOSTILE_FOLDERS = [
    "",
    "/",
    "//",
    "tests/",
    "a/Tests/b/",
    "x/mytests/",
    "unittest/",
    "İtest/Ｔest/",  # non-ASCII: no byte compare applies
    "tëst/tests/",
    "\ud800/test/",  # a lone surrogate in a folder
    "t\udcffest/",
    "a\x00test/b\nspec/",
    DEEP,
    DEEP + "fixtures/",
    "fixtures" + "/x" * 100_000 + "/",
]


@pytest.mark.parametrize(
    ("words", "prefixes", "suffixes"),
    [
        (frozenset({"tests", "fixtures", "spec"}), ("test",), ("test", "tests")),
        (frozenset({"", "İtest", "\ud800"}), ("",), ()),
        (frozenset(), (), ("st",)),
        (frozenset({"d", "x"}), ("İ", "t\udcff"), ("ｔ",)),
    ],
)
def test_holding_like_matches_the_python_twin_on_hostile_folders(
    words: frozenset[str], prefixes: tuple[str, ...], suffixes: tuple[str, ...]
) -> None:
    """Empty and slash-only folders, non-ASCII and surrogate segments, NUL and newlines, a
    folder 200,000 segments deep: the C pass answers what the twin does."""
    args = (HOSTILE_FOLDERS, words, prefixes, suffixes)
    assert _fastpaths.holding_like(*args) == passes.py_holding_like(*args)


class _NeverEqual(str):
    """A str subclass whose __eq__ says no even to its own spelling."""

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__


def test_a_word_that_is_not_a_plain_str_is_asked_not_read() -> None:
    """Such a word is asked the way `in` asks it, not compared by its bytes."""
    args = (["a/zz/", "zz/", "b/"], frozenset({_NeverEqual("zz"), "b"}), (), ())
    assert _fastpaths.holding_like(*args) == passes.py_holding_like(*args) == [2]
    gate = (["m.zz", "m.b", "zz"], frozenset(), frozenset({_NeverEqual("zz"), "b"}), (), (), ())
    assert _fastpaths.gate_rows(*gate) == passes.py_gate_rows(*gate) == [1]


@FUZZ
@given(PATHS, WORDS)
def test_rows_in_and_first_rows_match_the_python_twin(paths: list[str], words: list[str]) -> None:
    table = set(words) | set(paths[::3])
    assert _fastpaths.rows_in(paths, table) == passes.py_rows_in(paths, table)
    by_key = dict.fromkeys(table, ())
    compiled, twin = _fastpaths.first_rows(paths, by_key), passes.py_first_rows(paths, by_key)
    assert list(compiled.items()) == list(twin.items())  # same keys, rows and order
    assert list(compiled.values()) == sorted(compiled.values())  # first seen first
    assert compiled == {p: paths.index(p) for p in paths if p in table}


@FUZZ
@given(PATHS, PATHS, WORDS)
def test_pick_matches_the_python_twin(values: list[str], column: list[str], words: list[str]) -> None:
    for container in (set(words) | set(column[::2]), dict.fromkeys(words), frozenset(column[1::3])):
        assert _fastpaths.pick(values, column, container) == passes.py_pick(values, column, container)


@FUZZ
@given(PATHS, WORDS, WORDS, WORDS, WORDS, WORDS)
def test_gate_rows_match_the_python_twin(
    paths: list[str],
    exact: list[str],
    extensions: list[str],
    suffixes: list[str],
    prefixes: list[str],
    needles: list[str],
) -> None:
    args = (
        paths,
        frozenset(exact + paths[::4]),
        frozenset(extensions),
        tuple(suffixes),
        tuple(prefixes),
        tuple(needles),
    )
    assert _fastpaths.gate_rows(*args) == passes.py_gate_rows(*args)


def test_the_package_uses_the_compiled_passes_once_built() -> None:
    assert passes.compiled_available()
    assert passes.columns is _fastpaths.columns and passes.gate_rows is _fastpaths.gate_rows


@pytest.mark.parametrize(
    "bad",
    [
        lambda: _fastpaths.columns(["a", b"b"], True),  # type: ignore[list-item]
        lambda: _fastpaths.columns(("a",), True),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(["a", b"b"], {}, {}, (), frozenset(), (), ()),  # type: ignore[list-item]
        lambda: _fastpaths.tree_columns(["a", None], {}, {}, (), frozenset(), (), ()),  # type: ignore[list-item]
        lambda: _fastpaths.tree_columns(("a",), {}, {}, (), frozenset(), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(None, {}, {}, (), frozenset(), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(["a"], {}, {}, ["a"], frozenset(), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(["a"], {}, {}, (1,), frozenset(), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(["a/b"], {"b"}, {}, ("a", b"b"), frozenset(), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(["a/b"], {"b"}, 1, (), frozenset(), (), ()),  # type: ignore[arg-type]  # not a container
        lambda: _fastpaths.tree_columns(["a/b"], {}, {}, (), {"a"}, (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(["a/b"], {}, {}, (), frozenset(), (1,), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.tree_columns(["a/b"], {}, {}, (), frozenset(), (), ("a", None)),  # type: ignore[arg-type]
        lambda: _fastpaths.pick(["a"], ("a",), set()),  # type: ignore[arg-type]
        lambda: _fastpaths.gate_rows(["a", 1], frozenset(), frozenset(), (), (), ()),  # type: ignore[list-item]
        lambda: _fastpaths.gate_rows(["a"], frozenset(), frozenset(), (1,), (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.rows_in(["a", []], set()),  # type: ignore[list-item]
        lambda: _fastpaths.segments(["a", 1]),  # type: ignore[list-item]
        lambda: _fastpaths.holding(["a/b", None], {"a"}),  # type: ignore[list-item]
        lambda: _fastpaths.holding_like(["a/b", None], frozenset(), (), ()),  # type: ignore[list-item]
        lambda: _fastpaths.holding_like(["a/b"], {"a"}, (), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.holding_like(["a/b"], frozenset(), (1,), ()),  # type: ignore[arg-type]
        lambda: _fastpaths.holding_like(["a/b"], frozenset(), (), [""]),  # type: ignore[arg-type]
    ],
)
def test_wrong_types_are_a_type_error_not_a_crash(bad: object) -> None:
    with pytest.raises(TypeError):
        bad()  # type: ignore[operator]


def _generated(tree: list[str], compiled: bool) -> tuple[str, dict[str, str]]:
    passes.use_compiled(compiled)
    try:
        out = ENGINE.generate(tree, None, Options(include_provenance=True))
    finally:
        passes.use_compiled(True)
    return out.content, dict(out.fingerprint.witnesses)


HOSTILE = {
    "nul and surrogates": [
        "a\x00b/package.json",
        "x/\udcff\udc80.py",
        "tests/\ud800/m.js",  # (a surrogate in a kept negation is a 422 at the API: test_app.py)
        "tests/ok/node_modules/m.js",
        "Ｐkg/SETUP.PY",
        "İ/Cargo.toml",
        "examples/build/\x00.o",
    ],
    "a 10 MB path": ["src/" + "d/" * 2_500_000 + "CMakeLists.txt", "a" * 10_000_000 + ".go", "README.md"],
    "a 10 MB name full of dots and slashes": ["./" * 2_000_000 + "x.py", "./" * 3_000_000 + "tests/y.pyc"],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_trees_generate_alike_on_both_paths(name: str) -> None:
    tree = HOSTILE[name]
    assert _generated(tree, True) == _generated(tree, False)


def test_a_million_paths_generate_alike_on_both_paths() -> None:
    """Linear in the tree: a million paths (every name distinct, many folders, the tables of
    the compiled pass grown many times) through the whole generator, both ways."""
    tree = [f"pkg{i % 997}/sub{i % 13}/Mod{i}.{('py', 'ts', 'rs', 'txt')[i % 4]}" for i in range(1_000_000)]
    tree += ["tests/fixtures/node_modules/x/package.json", "examples/demo/target/debug/app"]
    compiled = _generated(tree, True)
    assert compiled == _generated(tree, False)
    assert compiled[1]["python"] == "pkg0/sub0/Mod0.py"


def test_the_compiled_passes_keep_memory_flat() -> None:
    """Every pass, on a tree with non-ASCII, Kelvin, surrogate and unnormalised paths and in its
    error paths, run 2,000 times under tracemalloc: a reference leaked per call (or per row)
    would hold tens of kilobytes more at the end; what is held stays within the noise."""
    tree = sorted(
        [f"pkg{i % 7}/Tests/Mod{i}.{('py', 'ts', 'rs', 'TXT')[i % 4]}" for i in range(60)]
        + ["\u212a/tests/Kelvin.PY", "é/examples/x.py", "tests/\ud800/m.js", "a\\b", "x//tests/y", "Dockerfile.dev"]
    )
    like = (frozenset({"tests", "examples"}), ("test",), ("tests",))

    def once() -> None:
        columns = _fastpaths.tree_columns(tree, {"dockerfile": 1}, frozenset({"py"}), ("dockerfile",), *like)
        _fastpaths.tree_scan(tree, {"dockerfile": 1}, {"py": 1}, ("dockerfile",), *like)
        _fastpaths.tree_scan(tree, {_NeverEqual("mod1.py")}, frozenset({"py"}), ("dockerfile",), *like)
        _fastpaths.columns(tree, False)
        _fastpaths.first_rows(columns[0], {"mod1.ts": 1})
        _fastpaths.pick(tree, columns[1], {"tests/"})
        _fastpaths.rows_in(columns[0], {"kelvin.py"})
        _fastpaths.gate_rows(columns[0], frozenset({"y"}), frozenset({"py"}), ("ts",), ("mod",), (".r", "#"))
        _fastpaths.segments(columns[3])
        _fastpaths.holding(columns[3], {"tests"})
        _fastpaths.holding_like(columns[3], *like)
        with pytest.raises(TypeError):
            _fastpaths.tree_columns([*tree, 1], {}, frozenset(), (), *like)  # type: ignore[list-item]
        with pytest.raises(TypeError):
            _fastpaths.tree_scan([*tree, 1], {"a": 1}, frozenset({"py"}), (), *like)  # type: ignore[list-item]

    for _ in range(50):
        once()
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            once()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert held < 64 * 1024, held
