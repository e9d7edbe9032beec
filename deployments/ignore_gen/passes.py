"""The per-path passes of fingerprinting and matching, compiled when the C extension is built.

`_fastpaths.c` does each pass in one C loop per path (no per-path Python, no intermediate
tuples); the functions here are its pure-Python twins, which give the same results and serve
when the extension is not built (a checkout without `pip install -e .` or
`python scripts/build_ext.py`). `columns`, `tree_columns`, `tree_scan`, `rows_in`, `first_rows`, `pick`,
`gate_rows`, `segments`, `holding`, `holding_like` and `settle` are whichever is in use; `use_compiled(False)` switches to the
twins (the tests and the bench run both).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Container
from itertools import chain, compress, count, repeat
from operator import gt, itemgetter, mul
from types import ModuleType
from typing import TypeVar

Columns = tuple[list[str], list[str], list[str]]
Samples = tuple[list[str], list[str], list[str]]
TreeColumns = tuple[
    list[str],
    list[str],
    list[str],
    list[str],
    dict[str, int],
    dict[str, int],
    dict[str, list[int]],
    Samples,
    bool,
]
TreeScan = tuple[dict[str, int], dict[str, int], dict[str, list[int]], Samples, bool]
_R = TypeVar("_R")
# (paths, name keys, extension keys, watched words, sample words, sample prefixes, sample suffixes)
TreePass = Callable[
    [list[str], Container[str], Container[str], tuple[str, ...], frozenset[str], tuple[str, ...], tuple[str, ...]], _R
]

_LAST = itemgetter(2)  # of a `str.rpartition`

_compiled: ModuleType | None
try:
    from deployments.ignore_gen import _fastpaths as _compiled
except ImportError:  # not built: the twins below serve
    _compiled = None


def py_columns(paths: list[str], lower: bool) -> Columns:
    """(names, folders, tails) of each path (lower-cased when `lower`): the part after its
    last `/`, the part up to and including it, the part of the name after its last `.` (the
    whole name when it has none)."""
    subjects = lowered(paths) if lower else paths
    names = list(map(_LAST, map(str.rpartition, subjects, repeat("/"))))
    folders = list(map(str.removesuffix, subjects, names))
    tails = list(map(_LAST, map(str.rpartition, names, repeat("."))))
    return names, folders, tails


def py_tree_columns(
    paths: list[str],
    name_keys: Container[str],
    tail_keys: Container[str],
    watch: tuple[str, ...],
    sample_words: frozenset[str],
    sample_starts: tuple[str, ...],
    sample_ends: tuple[str, ...],
) -> TreeColumns:
    """(names, folders, extensions, distinct folders, name firsts, extension firsts, watched,
    samples, clean) of the paths, lower-cased: `columns(paths, True)`'s names and folders; each
    name's extension, the part after its last `.` when that `.` follows its first character,
    else `''` (`py`, `.py` and `makefile` have none); the folders without repeats, first seen
    first; `first_rows` of the names in `name_keys` and of the extensions in `tail_keys`; each
    name that starts with a word of `watch` -> all its rows (first seen first, ascending); the paths (as given, in order) whose lower-cased folder
    `holding_like` picks with the sample words, with their names and folders case kept
    (`columns(samples, False)`); whether no path holds `\\`, `//` or `/./` nor starts with `/`
    or `./` (nothing for `fingerprint.normalise` to change)."""
    names, folders, tails = py_columns(paths, True)
    dotted = map(gt, map(str.rfind, names, repeat(".")), repeat(0))  # a '.' after the first character
    extensions = list(map(mul, tails, dotted))  # str * False is ''
    distinct = list(dict.fromkeys(folders))
    watched: dict[str, list[int]] = {}
    if watch:
        seen = set(names)
        chosen = set(compress(seen, map(str.startswith, seen, repeat(watch))))
        for at in py_rows_in(names, chosen) if chosen else ():  # rare names: a loop over their rows
            watched.setdefault(names[at], []).append(at)
    firsts = py_first_rows(names, name_keys), py_first_rows(extensions, tail_keys)
    inside = set(map(distinct.__getitem__, py_holding_like(distinct, sample_words, sample_starts, sample_ends)))
    samples = py_pick(paths, folders, inside) if inside else []
    sample_names, sample_folders, _ = py_columns(samples, False)
    text = "\n".join(paths)  # no needle holds a newline: none is found across two paths
    clean = not any(map(text.__contains__, ("\\", "//", "/./"))) and not any(
        map(str.startswith, paths, repeat(("/", "./")))
    )
    return names, folders, extensions, distinct, *firsts, watched, (samples, sample_names, sample_folders), clean


def py_tree_scan(
    paths: list[str],
    name_keys: Container[str],
    tail_keys: Container[str],
    watch: tuple[str, ...],
    sample_words: frozenset[str],
    sample_starts: tuple[str, ...],
    sample_ends: tuple[str, ...],
) -> TreeScan:
    """(name firsts, extension firsts, watched, samples, clean): `tree_columns` without the
    columns and the distinct folders, which the C pass never makes (it reads each ASCII path's
    bytes); the twin is `tree_columns`' own."""
    columns = py_tree_columns(paths, name_keys, tail_keys, watch, sample_words, sample_starts, sample_ends)
    return columns[4], columns[5], columns[6], columns[7], columns[8]


def lowered(paths: list[str]) -> list[str]:
    """The paths lower-cased: one `lower` and `split` in C when lower-casing kept every character's length (only then
    do the lines line up with the paths; `\\n` is no letter, so no case rule reads across it);
    else a path held a newline or a letter like `İ`: each is lowered on its own."""
    text = "\n".join(paths)
    low = text.lower()
    lows = low.split("\n") if len(low) == len(text) else []
    return lows if len(lows) == len(paths) else [p.lower() for p in paths]


def py_gate_rows(
    subjects: list[str],
    exact: frozenset[str],
    extensions: frozenset[str],
    suffixes: tuple[str, ...],
    prefixes: tuple[str, ...],
    needles: tuple[str, ...],
) -> list[int]:
    """The indexes (ascending) of the subjects in `exact`, whose tail (as in `columns`) is in
    `extensions`, that end with a suffix, start with a prefix or hold a needle."""
    out = set(compress(count(), map(exact.__contains__, subjects)))
    if extensions:
        tails = map(_LAST, map(str.rpartition, subjects, repeat(".")))
        out.update(compress(count(), map(extensions.__contains__, tails)))
    if suffixes:
        out.update(compress(count(), map(str.endswith, subjects, repeat(suffixes))))
    if prefixes:
        out.update(compress(count(), map(str.startswith, subjects, repeat(prefixes))))
    for needle in needles:
        out.update(compress(count(), map(str.__contains__, subjects, repeat(needle))))
    return sorted(out)


def py_rows_in(column: list[str], container: Container[str]) -> list[int]:
    """The indexes (ascending) of the column's items that are in `container`."""
    return list(compress(count(), map(container.__contains__, column)))


def py_first_rows(column: list[str], table: Container[str]) -> dict[str, int]:
    """Each item of `column` that is in `table` -> its first row, first seen first: the keys in
    the order of their first rows, then each given its first row by a dict filled from the last
    of the rows back (an update keeps the keys' order)."""
    rows = py_rows_in(column, table)
    out: dict[str, int] = dict.fromkeys(map(column.__getitem__, rows), 0)
    out.update(zip(map(column.__getitem__, reversed(rows)), reversed(rows), strict=True))
    return out


def py_pick(values: list[str], column: list[str], container: Container[str]) -> list[str]:
    """The values (in order) whose row of `column` is in `container` (up to the shorter list)."""
    return list(compress(values, map(container.__contains__, column)))


def py_segments(folders: list[str]) -> list[str]:
    """The distinct `/`-separated segments of the folders (`str.split`'s, empty ones included),
    in the order first seen."""
    return list(dict.fromkeys(chain.from_iterable(map(str.split, folders, repeat("/")))))


def py_holding(folders: list[str], chosen: Container[str]) -> list[int]:
    """The indexes (ascending) of the folders with a segment in `chosen`."""
    return [at for at, folder in enumerate(folders) if any(map(chosen.__contains__, folder.split("/")))]


def py_holding_like(
    folders: list[str], words: frozenset[str], prefixes: tuple[str, ...], suffixes: tuple[str, ...]
) -> list[int]:
    """The indexes (ascending) of the folders with a `/`-separated segment (`str.split`'s, empty
    ones included) that is in `words`, starts with a prefix or ends with a suffix (the C pass
    makes no str per segment; here each distinct segment is classified once, C-level maps)."""
    distinct = py_segments(folders)
    chosen = set(words.intersection(distinct))  # `segment in words` for each, as `in` asks it
    chosen.update(compress(distinct, map(str.startswith, distinct, repeat(prefixes))))
    chosen.update(compress(distinct, map(str.endswith, distinct, repeat(suffixes))))
    return py_holding(folders, chosen) if chosen else []


def py_settle(values: list[str] | list[bool]) -> bool:
    """Pure Python cannot take a list out of the collector's watch (the C `settle` does, for a
    list of only exact `str`, `int` and `bool`): nothing is done; whether it is untracked."""
    return not gc.is_tracked(values)


columns: Callable[[list[str], bool], Columns] = py_columns
tree_columns: TreePass[TreeColumns] = py_tree_columns
tree_scan: TreePass[TreeScan] = py_tree_scan
segments: Callable[[list[str]], list[str]] = py_segments
holding: Callable[[list[str], Container[str]], list[int]] = py_holding
holding_like: Callable[[list[str], frozenset[str], tuple[str, ...], tuple[str, ...]], list[int]] = py_holding_like
rows_in: Callable[[list[str], Container[str]], list[int]] = py_rows_in
settle: Callable[[list[str] | list[bool]], bool] = py_settle
first_rows: Callable[[list[str], Container[str]], dict[str, int]] = py_first_rows
pick: Callable[[list[str], list[str], Container[str]], list[str]] = py_pick
gate_rows: Callable[
    [list[str], frozenset[str], frozenset[str], tuple[str, ...], tuple[str, ...], tuple[str, ...]], list[int]
] = py_gate_rows


def use_compiled(on: bool = True) -> bool:
    """Use the C passes (when built) or the pure-Python twins; whether the C passes are in use."""
    global columns, tree_columns, tree_scan, gate_rows, rows_in, first_rows, pick, segments, holding, holding_like
    global settle
    if on and _compiled is not None:
        settle, tree_scan = _compiled.settle, _compiled.tree_scan
        columns, tree_columns, gate_rows = _compiled.columns, _compiled.tree_columns, _compiled.gate_rows
        rows_in, first_rows, pick = _compiled.rows_in, _compiled.first_rows, _compiled.pick
        segments, holding, holding_like = _compiled.segments, _compiled.holding, _compiled.holding_like
        return True
    columns, tree_columns, gate_rows, tree_scan = py_columns, py_tree_columns, py_gate_rows, py_tree_scan
    rows_in, first_rows, pick = py_rows_in, py_first_rows, py_pick
    segments, holding, holding_like, settle = py_segments, py_holding, py_holding_like, py_settle
    return False


def compiled_available() -> bool:
    return _compiled is not None


use_compiled()
