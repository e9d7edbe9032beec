"""What the log store applies by itself, from the settings in `config.db`: client masking at ingestion
(`gdpr_mode`), the daily retention (`log_retention_days`) and the files it follows across a rotation.

Masking uses `logparse.mask_ip`, the function the read paths (`/api/logs`, the stream, `/api/dns/*`)
use, so a row masked when written reads the same as one masked when read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from actors.webfilter.logparse import mask_ip

CLIENT_TABLES = ("logs", "dns_logs", "recent_blocks", "r_client")  # every table that stores a client address


@dataclass(frozen=True)
class LogSettings:
    gdpr_mode: bool = False
    retention_days: int = 30


def mask_clients(conn: duckdb.DuckDBPyConnection, table: str) -> int:
    """Replace each full client address in `table` by its masked form; returns the rows changed. The
    distinct addresses are masked in Python (`mask_ip`) and joined back, so no address is masked twice
    differently and no row is read into Python."""
    clients = [
        row[0] for row in conn.execute(f"SELECT DISTINCT client FROM {table} WHERE client IS NOT NULL").fetchall()
    ]
    pairs = [(c, mask_ip(c)) for c in clients if mask_ip(c) != c]
    if not pairs:
        return 0
    conn.execute(
        "CREATE OR REPLACE TEMP TABLE client_masks AS SELECT unnest($1) AS client, unnest($2) AS masked",
        [[p[0] for p in pairs], [p[1] for p in pairs]],
    )
    changed = int(
        (
            conn.execute(f"SELECT count(*) FROM {table} WHERE client IN (SELECT client FROM client_masks)").fetchone()
            or (0,)
        )[0]
    )
    conn.execute(
        f"UPDATE {table} SET client = client_masks.masked FROM client_masks WHERE {table}.client = client_masks.client"
    )
    return changed


def shift_rotated(path: Path, keep: int) -> None:
    """`path.{keep-2}` -> `path.{keep-1}` ... `path` -> `path.0` (the oldest beyond `keep` is dropped), as
    Squid's `logfile_rotate` names them."""
    for index in range(keep - 1, 0, -1):
        older = path.with_name(f"{path.name}.{index - 1}")
        if older.exists():
            os.replace(older, path.with_name(f"{path.name}.{index}"))
    if path.exists():
        os.replace(path, path.with_name(f"{path.name}.0"))


def rotated_copy(path: str, inode: int) -> Path | None:
    """The file that was `path` before a rotation (`path.0`, `path.1`, ...: any `path.*` with that inode),
    or None once it is gone."""
    base = Path(path)
    for candidate in base.parent.glob(base.name + ".*"):
        try:
            if candidate.stat().st_ino == inode:
                return candidate
        except FileNotFoundError:
            continue
    return None
