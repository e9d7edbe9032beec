"""Build the DuckDB database of the ASN lookup API from the raw snapshot.

Tables:
  meta(key, value)      dataset name, date, origin, row counts, schema version
  asn                   one row per AS number (PRIMARY KEY → ART index): name, organisation,
                        country, its v4/v6 prefix lists, counts and announced address totals
  prefix                every announced prefix with its origin AS
  range4 / range6       the routing table flattened into sorted, disjoint address ranges,
                        each labelled with its most specific prefix (longest-prefix match
                        becomes one binary search); v6 addresses split into hi/lo 64-bit words

The database is written to a temporary file and renamed into place under an
exclusive file lock, so concurrent replicas never see a half-built file and only
one of them builds it.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np

from deployments.asn import dataset
from deployments.asn.dataset import DatasetError, DatasetFiles
from deployments.asn.parsing import parse_asname
from deployments.asn.prefixes import Prefix, flatten, read_ipasn_lines, union_size

SCHEMA_VERSION = "3"
_MASK64 = (1 << 64) - 1


@contextmanager
def build_lock(db_path: Path) -> Iterator[None]:
    """Exclusive lock beside the database file (held while checking and building)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with open(db_path.with_suffix(db_path.suffix + ".lock"), "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def read_meta(db_path: Path) -> dict[str, str] | None:
    """The meta table of an existing database, or None when it is missing or unreadable."""
    if not db_path.is_file():
        return None
    try:
        with duckdb.connect(str(db_path), read_only=True) as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except duckdb.Error:
        return None


def is_current(db_path: Path, files: DatasetFiles) -> bool:
    meta = read_meta(db_path)
    if not meta:
        return False
    return meta.get("schema_version") == SCHEMA_VERSION and meta.get("source_fingerprint") == files.fingerprint()


def ensure_database(db_path: Path, files: DatasetFiles) -> bool:
    """Build the database unless an up-to-date one exists. Returns True when it built."""
    with build_lock(db_path):
        return _build_if_stale(db_path, files)


def prepare(
    db_path: Path,
    pkg_dir: Path,
    prefix_file: str,
    fetch: bool,
    prefix_path: Path | None = None,
    names_path: Path | None = None,
) -> bool:
    """First start of a replica: fetch the package if missing (when allowed), then build.

    Fetching and building happen under one lock, so replicas starting together
    neither extract the package twice nor build the database twice. With an operator's
    `prefix_path` (and `names_path`) the database is built from those; the package is
    fetched only when the names still have to come from it.
    """
    with build_lock(db_path):
        try:
            files = dataset.locate(pkg_dir, prefix_file, prefix_path, names_path)
        except DatasetError:
            operator_files = [p for p in (prefix_path, names_path) if p is not None]
            if not fetch or any(not p.is_file() for p in operator_files):
                raise
            dataset.fetch(pkg_dir)
            files = dataset.locate(pkg_dir, prefix_file, prefix_path, names_path)
        return _build_if_stale(db_path, files)


def _build_if_stale(db_path: Path, files: DatasetFiles) -> bool:
    if is_current(db_path, files):
        return False
    build(db_path, files)
    return True


def read_names(path: Path) -> dict[int, str]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path.name}: not readable JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise DatasetError(f"{path.name}: expected an object of AS number → name")
    names: dict[int, str] = {}
    for key, value in raw.items():
        if not str(key).isdigit() or not isinstance(value, str):
            raise DatasetError(f"{path.name}: bad entry {str(key)[:20]!r}")
        names[int(key)] = value
    return names


def read_prefixes(path: Path) -> list[Prefix]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            return list(dict.fromkeys(read_ipasn_lines(handle)))  # drop repeated identical rows
    except (OSError, ValueError, EOFError) as exc:
        raise DatasetError(f"{path.name}: {exc}") from exc


def _split(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
    hi = np.fromiter((v >> 64 for v in values), dtype=np.uint64, count=len(values))
    lo = np.fromiter((v & _MASK64 for v in values), dtype=np.uint64, count=len(values))
    return hi, lo


def _prefix_columns(prefixes: list[Prefix]) -> dict[str, np.ndarray]:
    starts_hi, starts_lo = _split([p.start for p in prefixes])
    return {
        "id": np.arange(len(prefixes), dtype=np.uint32),
        "family": np.fromiter((p.family for p in prefixes), dtype=np.uint8, count=len(prefixes)),
        "prefix": np.array([p.text() for p in prefixes], dtype=object),
        "length": np.fromiter((p.length for p in prefixes), dtype=np.uint8, count=len(prefixes)),
        "asn": np.fromiter((p.asn for p in prefixes), dtype=np.uint64, count=len(prefixes)),
        "start_hi": starts_hi,
        "start_lo": starts_lo,
    }


def _range_columns(prefixes: list[Prefix], family: int) -> dict[str, np.ndarray]:
    """Flattened ranges of one family; `prefix_id` indexes the global prefix list."""
    ids = [i for i, p in enumerate(prefixes) if p.family == family]
    subset = [prefixes[i] for i in ids]
    ranges = flatten(subset)
    start_hi, start_lo = _split([r[0] for r in ranges])
    stop_hi, stop_lo = _split([r[1] for r in ranges])
    return {
        "start_hi": start_hi,
        "start_lo": start_lo,
        "stop_hi": stop_hi,
        "stop_lo": stop_lo,
        "prefix_id": np.fromiter((ids[r[2]] for r in ranges), dtype=np.uint32, count=len(ranges)),
    }


def _asn_columns(names: dict[int, str], prefixes: list[Prefix]) -> dict[str, np.ndarray]:
    spans: dict[int, dict[int, list[tuple[int, int]]]] = defaultdict(lambda: {4: [], 6: []})
    for p in prefixes:
        spans[p.asn][p.family].append((p.start, p.stop))
    asns = sorted(set(names) | set(spans))
    parsed = [parse_asname(names[a]) if a in names else None for a in asns]
    return {
        "asn": np.array(asns, dtype=np.uint64),
        "name": np.array([p.name if p else None for p in parsed], dtype=object),
        "organisation": np.array([p.organisation if p else None for p in parsed], dtype=object),
        "country": np.array([p.country if p else None for p in parsed], dtype=object),
        "description": np.array([p.description if p else None for p in parsed], dtype=object),
        "v4_addresses": np.array([str(union_size(spans[a][4])) if a in spans else "0" for a in asns], dtype=object),
        "v6_addresses": np.array([str(union_size(spans[a][6])) if a in spans else "0" for a in asns], dtype=object),
    }


def build(db_path: Path, files: DatasetFiles) -> None:
    """Parse the raw files and write a fresh database at `db_path` (atomic rename)."""
    names = read_names(files.names)
    prefixes = read_prefixes(files.prefixes)
    if not names:
        raise DatasetError(f"{files.names.name}: no AS names")
    if not prefixes:
        raise DatasetError(f"{files.prefixes.name}: no prefixes")
    header = files.header()

    tmp_path = db_path.with_name(f".{db_path.name}.{os.getpid()}.tmp")
    tmp_path.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(tmp_path)) as conn:
            _write(conn, files, header, names, prefixes)
        os.replace(tmp_path, db_path)
    finally:
        tmp_path.unlink(missing_ok=True)
        Path(str(tmp_path) + ".wal").unlink(missing_ok=True)


# The tables, built from the registered column views (`*_cols`) in this order.
_PREFIX_SQL = """
CREATE TABLE prefix AS
SELECT id::UINTEGER AS id, family::UTINYINT AS family, prefix, length::UTINYINT AS length,
       asn::UBIGINT AS asn, ((start_hi::UHUGEINT << 64) | start_lo::UHUGEINT) AS start
FROM prefix_cols ORDER BY id
"""
_RANGE4_SQL = """
CREATE TABLE range4 AS
SELECT r.start_lo AS start, r.stop_lo AS stop, r.prefix_id, p.asn, p.prefix
FROM range4_cols r JOIN prefix p ON p.id = r.prefix_id ORDER BY r.start_lo
"""
_RANGE6_SQL = """
CREATE TABLE range6 AS
SELECT r.start_hi, r.start_lo, r.stop_hi, r.stop_lo, r.prefix_id, p.asn, p.prefix
FROM range6_cols r JOIN prefix p ON p.id = r.prefix_id ORDER BY r.start_hi, r.start_lo
"""
_ASN_TABLE_SQL = """
CREATE TABLE asn (
    asn UBIGINT PRIMARY KEY, name VARCHAR, organisation VARCHAR, country VARCHAR,
    description VARCHAR, v4_prefixes VARCHAR[], v6_prefixes VARCHAR[],
    v4_count INTEGER, v6_count INTEGER, v4_addresses UBIGINT, v6_addresses UHUGEINT,
    search_text VARCHAR
)
"""
_ASN_ROWS_SQL = """
INSERT INTO asn
WITH lists AS (
    SELECT asn,
           list(prefix ORDER BY start) FILTER (WHERE family = 4) AS v4,
           list(prefix ORDER BY start) FILTER (WHERE family = 6) AS v6
    FROM prefix GROUP BY asn
)
SELECT a.asn, a.name, a.organisation, a.country, a.description,
       coalesce(l.v4, []::VARCHAR[]), coalesce(l.v6, []::VARCHAR[]),
       len(coalesce(l.v4, []::VARCHAR[])), len(coalesce(l.v6, []::VARCHAR[])),
       a.v4_addresses::UBIGINT, a.v6_addresses::UHUGEINT,
       lower(concat_ws(' ', a.name, a.organisation, a.description))
FROM asn_cols a LEFT JOIN lists l ON l.asn = a.asn
ORDER BY a.asn
"""
_TABLES_SQL = (_PREFIX_SQL, _RANGE4_SQL, _RANGE6_SQL, _ASN_TABLE_SQL, _ASN_ROWS_SQL)


def _write(
    conn: duckdb.DuckDBPyConnection,
    files: DatasetFiles,
    header: dict[str, str],
    names: dict[int, str],
    prefixes: list[Prefix],
) -> None:
    views = {
        "prefix_cols": _prefix_columns(prefixes),
        "range4_cols": _range_columns(prefixes, 4),
        "range6_cols": _range_columns(prefixes, 6),
        "asn_cols": _asn_columns(names, prefixes),
    }
    for view, columns in views.items():
        conn.register(view, columns)
    for sql in _TABLES_SQL:
        conn.execute(sql)
    for view in views:
        conn.unregister(view)
    counts = {
        table: (conn.execute(f"SELECT count(*) FROM {table}").fetchone() or (0,))[0]
        for table in ("asn", "prefix", "range4", "range6")
    }
    conn.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    conn.executemany("INSERT INTO meta VALUES (?, ?)", list(_meta(files, header, names, prefixes, counts).items()))
    conn.execute("CHECKPOINT")


def _meta(
    files: DatasetFiles, header: dict[str, str], names: dict[int, str], prefixes: list[Prefix], counts: dict[str, int]
) -> dict[str, str]:
    """The `meta` table: where the data came from, and how many rows each table has."""
    v4_prefixes = int(sum(1 for p in prefixes if p.family == 4))
    return {
        "schema_version": SCHEMA_VERSION,
        "source_fingerprint": files.fingerprint(),
        "dataset_name": f"pyasn {files.prefixes.name} + {files.names.name}",
        "dataset_date": files.snapshot_date or "",
        "package": files.package or "",
        "names_file": files.names.name,
        "prefix_file": files.prefixes.name,
        "source_rib": header.get("Original file", ""),
        "converted_on": header.get("Converted on", ""),
        "names_count": str(len(names)),
        "v4_prefix_count": str(v4_prefixes),
        "v6_prefix_count": str(len(prefixes) - v4_prefixes),
        **{f"rows_{table}": str(count) for table, count in counts.items()},
    }
