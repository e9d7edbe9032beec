"""Read side of the ASN database: lookups by AS number, by IP address, and name search.

The DuckDB file is the source of truth (built once by the loader); at open each
replica loads three compact indexes from it, so no lookup touches DuckDB or scans:
  * by AS number: a dict AS → record fields and the ids of its prefixes (hash index),
  * by IP: the flattened, disjoint range tables as sorted arrays; the longest-prefix
    match is one `bisect` (bench/asn.py measures it against the DuckDB range query),
  * prefix id → text and origin AS.
Search is a bounded filter over 77k names and runs in DuckDB.
"""

from __future__ import annotations

import ipaddress
import threading
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np


@dataclass(frozen=True)
class IpMatch:
    """Result of a longest-prefix match."""

    prefix: str
    asn: int


class _FamilyIndex:
    """Sorted disjoint ranges of one address family, each labelled with a prefix id."""

    def __init__(self, starts: array[int] | list[int], stops: array[int] | list[int], prefix_ids: array[int]) -> None:
        self.starts = starts
        self.stops = stops
        self.prefix_ids = prefix_ids

    def find(self, value: int) -> int | None:
        """Id of the most specific prefix covering `value`."""
        position = bisect_right(self.starts, value) - 1
        if position < 0 or self.stops[position] < value:
            return None
        return self.prefix_ids[position]

    def __len__(self) -> int:
        return len(self.starts)


def _count(conn: duckdb.DuckDBPyConnection, table: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


def _prefix_order(prefix: str) -> tuple[int, int]:
    network = ipaddress.ip_network(prefix)
    return int(network.network_address), network.prefixlen


class AsnStore:
    """Read-only view of one built database file."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path
        self._conn = duckdb.connect(str(db_path), read_only=True)
        self._lock = threading.Lock()
        self.meta: dict[str, str] = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        self._v4 = self._load_v4()
        self._v4_arrays = tuple(
            np.asarray(a, dtype=np.uint64) for a in (self._v4.starts, self._v4.stops, self._v4.prefix_ids)
        )
        self._v6 = self._load_v6()
        self._prefix_text, self._prefix_asn = self._load_prefixes()
        self._records = self._load_records()
        self._country_cache: dict[tuple[str, int | None], list[str]] = {}
        self._dataset_day: date | None = None
        snapshot = self.meta.get("dataset_date") or None
        self._dataset: dict[str, Any] = {
            "name": self.meta.get("dataset_name"),
            "date": snapshot,
            "package": self.meta.get("package") or None,
            "source": self.meta.get("source_rib") or None,
            "age_days": None,
            "live": False,
            "notice": f"historical routing snapshot of {snapshot or 'unknown date'}; not live BGP data",
        }

    def _load_v4(self) -> _FamilyIndex:
        cols = self._conn.execute("SELECT start, stop, prefix_id FROM range4 ORDER BY start").fetchnumpy()
        return _FamilyIndex(
            array("L", cols["start"].astype("uint64").tobytes()),
            array("L", cols["stop"].astype("uint64").tobytes()),
            array("L", cols["prefix_id"].astype("uint64").tobytes()),
        )

    def _load_v6(self) -> _FamilyIndex:
        rows = self._conn.execute(
            "SELECT start_hi, start_lo, stop_hi, stop_lo, prefix_id FROM range6 ORDER BY start_hi, start_lo"
        ).fetchall()
        return _FamilyIndex(
            [(r[0] << 64) | r[1] for r in rows],
            [(r[2] << 64) | r[3] for r in rows],
            array("L", (r[4] for r in rows)),
        )

    def _load_prefixes(self) -> tuple[list[str], array[int]]:
        cols = self._conn.execute("SELECT prefix, asn FROM prefix ORDER BY id").fetchnumpy()
        return list(cols["prefix"]), array("L", cols["asn"].astype("uint64").tobytes())

    def _load_records(self) -> dict[int, tuple[Any, ...]]:
        """AS → (name, organisation, country, description, v4 ids, v6 ids, v4 count, v6 count, v4 addr, v6 addr)."""
        rows = self._conn.execute(
            """
            WITH ids AS (
                SELECT asn, list(id ORDER BY start) FILTER (WHERE family = 4) AS v4,
                       list(id ORDER BY start) FILTER (WHERE family = 6) AS v6
                FROM prefix GROUP BY asn
            )
            SELECT a.asn, a.name, a.organisation, a.country, a.description, ids.v4, ids.v6,
                   a.v4_count, a.v6_count, a.v4_addresses, a.v6_addresses
            FROM asn a LEFT JOIN ids USING (asn)
            """
        ).fetchall()
        return {
            row[0]: (row[1], row[2], row[3], row[4], array("L", row[5] or ()), array("L", row[6] or ()), *row[7:])
            for row in rows
        }

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def counts(self) -> dict[str, int]:
        """Row counts of every table (health check); runs real queries against the file."""
        with self._lock:
            return {table: _count(self._conn, table) for table in ("asn", "prefix", "range4", "range6")} | {
                "memory_asns": len(self._records),
                "memory_ranges_v4": len(self._v4),
                "memory_ranges_v6": len(self._v6),
            }

    def dataset(self) -> dict[str, Any]:
        """What every response says about the data's origin and age, so nobody mistakes it for live data."""
        today = datetime.now(UTC).date()
        if self._dataset_day != today:
            snapshot = self._dataset["date"]
            age = (today - date.fromisoformat(snapshot)).days if snapshot else None
            self._dataset = {**self._dataset, "age_days": age}
            self._dataset_day = today
        return self._dataset

    def get_asn(self, asn: int) -> dict[str, Any] | None:
        """The full record of one AS number, or None (a dict lookup, no query)."""
        row = self._records.get(asn)
        if row is None:
            return None
        record = self._summary(asn, row)
        record["prefixes"] = {
            "v4": [self._prefix_text[i] for i in row[4]],
            "v6": [self._prefix_text[i] for i in row[5]],
        }
        return record

    def summary(self, asn: int) -> dict[str, Any] | None:
        """The record without its prefix lists (IP lookups)."""
        row = self._records.get(asn)
        return None if row is None else self._summary(asn, row)

    def brief(self, asn: int) -> dict[str, Any]:
        """Name, organisation and country of an AS (bulk answers list each origin once)."""
        row = self._records.get(asn)
        if row is None:
            return {"name": None, "organisation": None, "country": None}
        return {"name": row[0], "organisation": row[1], "country": row[2]}

    @staticmethod
    def _summary(asn: int, row: tuple[Any, ...]) -> dict[str, Any]:
        name, organisation, country, description, _, _, v4_count, v6_count, v4_addr, v6_addr = row
        return {
            "asn": asn,
            "asn_text": f"AS{asn}",
            "name": name,
            "organisation": organisation,
            "country": country,
            "country_code": country,
            "description": description,
            "prefix_counts": {"v4": v4_count, "v6": v6_count},
            "num_ips": v4_addr,
            "addresses": {"v4": v4_addr, "v6": v6_addr},
        }

    def country_prefixes(self, country: str, family: int | None = None) -> list[str]:
        """Every prefix announced by an AS registered in `country` (ISO 3166), v4 first.

        The country is the AS's registration country from the AS names list, not where
        each address is used: a geo filter built on it blocks by who announces a prefix.
        Cached per (country, family): a few milliseconds once, then a dict lookup.
        """
        key = (country, family)
        cached = self._country_cache.get(key)
        if cached is None:
            v4: list[str] = []
            v6: list[str] = []
            for row in self._records.values():
                if row[2] != country:
                    continue
                if family in (None, 4):
                    v4.extend(self._prefix_text[i] for i in row[4])
                if family in (None, 6):
                    v6.extend(self._prefix_text[i] for i in row[5])
            cached = self._country_cache[key] = sorted(v4, key=_prefix_order) + sorted(v6, key=_prefix_order)
        return cached

    def match_ip(self, family: int, value: int) -> IpMatch | None:
        index = self._v4 if family == 4 else self._v6
        prefix_id = index.find(value)
        if prefix_id is None:
            return None
        return IpMatch(prefix=self._prefix_text[prefix_id], asn=self._prefix_asn[prefix_id])

    @property
    def prefix_texts(self) -> list[str]:
        """Prefix id → prefix text (what `match_ids` returns ids into)."""
        return self._prefix_text

    @property
    def prefix_origins(self) -> array[int]:
        """Prefix id → origin AS number."""
        return self._prefix_asn

    def match_ids(self, families: list[int], values: list[int]) -> list[int]:
        """Longest-prefix match of many addresses: the prefix id of each, -1 where none covers it.

        IPv4 addresses go through one `numpy.searchsorted` over the same sorted range arrays
        the single lookup bisects; IPv6 (128-bit, outside numpy's integers) are bisected one by one.
        """
        out = [-1] * len(values)
        v4_at = [i for i, family in enumerate(families) if family == 4]
        if v4_at:
            starts, stops, ids = self._v4_arrays
            wanted = np.fromiter((values[i] for i in v4_at), dtype=np.uint64, count=len(v4_at))
            pos = np.searchsorted(starts, wanted, side="right") - 1
            clipped = np.maximum(pos, 0)
            hit = (pos >= 0) & (stops[clipped] >= wanted)
            found = np.where(hit, ids[clipped].astype(np.int64), -1).tolist()
            for i, pid in zip(v4_at, found, strict=True):
                out[i] = pid
        for i, family in enumerate(families):
            if family == 6:
                pid = self._v6.find(values[i])
                out[i] = -1 if pid is None else pid
        return out

    def search(self, text: str, country: str | None, limit: int) -> list[dict[str, Any]]:
        """Case-insensitive substring search over name, organisation and description.

        Ranking: exact name, then name prefix, then most announced IPv4 space.
        A search is a filter over 77k rows by nature (not a lookup); it is bounded by `limit`.
        """
        needle = text.lower()
        sql = (
            "SELECT asn, name, organisation, country, v4_count, v6_count, v4_addresses "
            "FROM asn WHERE contains(search_text, ?) "
            + ("AND country = ? " if country else "")
            + "ORDER BY (lower(name) = ?) DESC, starts_with(lower(coalesce(name, '')), ?) DESC, "
            "v4_addresses DESC, asn LIMIT ?"
        )
        params: list[Any] = [needle] + ([country] if country else []) + [needle, needle, limit]
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [
            {
                "asn": r[0],
                "name": r[1],
                "organisation": r[2],
                "country": r[3],
                "prefix_counts": {"v4": r[4], "v6": r[5]},
                "num_ips": r[6],
            }
            for r in rows
        ]
