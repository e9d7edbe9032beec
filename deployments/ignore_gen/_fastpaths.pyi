# The C extension `_fastpaths.c` (its pure-Python twins: passes.py `py_*`).

from collections.abc import Container

from deployments.ignore_gen.passes import TreeColumns, TreeScan

def columns(paths: list[str], lower: bool, /) -> tuple[list[str], list[str], list[str]]: ...
def tree_columns(
    paths: list[str],
    name_keys: Container[str],
    tail_keys: Container[str],
    watch: tuple[str, ...],
    sample_words: frozenset[str],
    sample_starts: tuple[str, ...],
    sample_ends: tuple[str, ...],
    /,
) -> TreeColumns: ...
def tree_scan(
    paths: list[str],
    name_keys: Container[str],
    tail_keys: Container[str],
    watch: tuple[str, ...],
    sample_words: frozenset[str],
    sample_starts: tuple[str, ...],
    sample_ends: tuple[str, ...],
    /,
) -> TreeScan: ...
def rows_in(column: list[str], container: Container[str], /) -> list[int]: ...
def first_rows(column: list[str], table: Container[str], /) -> dict[str, int]: ...
def pick(values: list[str], column: list[str], container: Container[str], /) -> list[str]: ...
def segments(folders: list[str], /) -> list[str]: ...
def holding(folders: list[str], chosen: Container[str], /) -> list[int]: ...
def holding_like(
    folders: list[str], words: frozenset[str], prefixes: tuple[str, ...], suffixes: tuple[str, ...], /
) -> list[int]: ...
def gate_rows(
    subjects: list[str],
    exact: frozenset[str],
    extensions: frozenset[str],
    suffixes: tuple[str, ...],
    prefixes: tuple[str, ...],
    needles: tuple[str, ...],
    /,
) -> list[int]: ...
def settle(values: list[str] | list[bool], /) -> bool: ...
