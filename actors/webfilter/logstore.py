"""The log store actor: tails Squid's access log into DuckDB and feeds the live stream.

Rows land in `logs`; each batch is also aggregated into narrow rollups (per minute,
and per hour by domain, client, rule and method/agent) that the analytics read, so a
dashboard query scans thousands of rollup rows, not millions of log rows. The tail
offset (with the file's inode) is kept in the database, so a restart neither loses
nor repeats lines. Timestamps are UTC throughout.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import duckdb

from actors.webfilter.logparse import COLUMNS, Record

SCHEMA = """
CREATE SEQUENCE IF NOT EXISTS log_id;
CREATE TABLE IF NOT EXISTS logs (id BIGINT DEFAULT nextval('log_id'), ts TIMESTAMP, client VARCHAR,
    method VARCHAR, status INTEGER, squid_status VARCHAR, bytes_in BIGINT, bytes_out BIGINT, elapsed_ms INTEGER,
    blocked BOOLEAN, rule VARCHAR, url VARCHAR, host VARCHAR, agent VARCHAR);
CREATE TABLE IF NOT EXISTS r_minute (minute TIMESTAMP, requests BIGINT, blocked BIGINT, bytes_in BIGINT,
    bytes_out BIGINT);
CREATE TABLE IF NOT EXISTS r_domain (hour TIMESTAMP, host VARCHAR, requests BIGINT, blocked BIGINT);
CREATE TABLE IF NOT EXISTS r_client (hour TIMESTAMP, client VARCHAR, requests BIGINT, blocked BIGINT,
    last_seen TIMESTAMP);
CREATE TABLE IF NOT EXISTS r_rule (hour TIMESTAMP, rule VARCHAR, requests BIGINT);
CREATE TABLE IF NOT EXISTS r_agent (hour TIMESTAMP, method VARCHAR, agent VARCHAR, requests BIGINT);
CREATE TABLE IF NOT EXISTS tail_state (path VARCHAR PRIMARY KEY, inode BIGINT, "offset" BIGINT);
"""

ROLLUPS: dict[str, str] = {
    "r_minute": "SELECT date_trunc('minute', ts) AS minute, count(*) AS requests, count(*) FILTER (blocked) AS blocked, "
    "sum(bytes_in) AS bytes_in, sum(bytes_out) AS bytes_out FROM {src} GROUP BY 1",
    "r_domain": "SELECT date_trunc('hour', ts) AS hour, host, count(*) AS requests, count(*) FILTER (blocked) AS blocked "
    "FROM {src} GROUP BY 1, 2",
    "r_client": "SELECT date_trunc('hour', ts) AS hour, client, count(*) AS requests, count(*) FILTER (blocked) AS blocked, "
    "max(ts) AS last_seen FROM {src} GROUP BY 1, 2",
    "r_rule": "SELECT date_trunc('hour', ts) AS hour, rule, count(*) AS requests FROM {src} WHERE rule IS NOT NULL "
    "GROUP BY 1, 2",
    "r_agent": "SELECT date_trunc('hour', ts) AS hour, method, coalesce(agent, '-') AS agent, count(*) AS requests "
    "FROM {src} GROUP BY 1, 2, 3",
}
COMPACT: dict[str, str] = {
    "r_minute": "SELECT minute, sum(requests), sum(blocked), sum(bytes_in), sum(bytes_out) FROM r_minute GROUP BY 1",
    "r_domain": "SELECT hour, host, sum(requests), sum(blocked) FROM r_domain GROUP BY 1, 2",
    "r_client": "SELECT hour, client, sum(requests), sum(blocked), max(last_seen) FROM r_client GROUP BY 1, 2",
    "r_rule": "SELECT hour, rule, sum(requests) FROM r_rule GROUP BY 1, 2",
    "r_agent": "SELECT hour, method, agent, sum(requests) FROM r_agent GROUP BY 1, 2, 3",
}
MAX_BATCH_BYTES = 8 * 1024 * 1024
HOST_PATTERN = r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@?#]*@)?(\[[^\]]*\]|[^:/?#]*)"


class LogStore:
    """DuckDB log store + access-log tailer + ring buffer of recent rows for the stream."""

    def __init__(self, db_path: str, access_log: str | None = None, interval: float = 0.2) -> None:
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
        self.db_path = db_path
        self.db = duckdb.connect(db_path)
        self.db.execute("SET TimeZone = 'UTC'") if self._has_icu() else None
        self.db.execute(SCHEMA)
        # the tailer writes through its own connection from a worker thread, so queries never wait for a
        # large chunk to be ingested (DuckDB connections to one database may be used concurrently)
        self.tail_db = self.db.cursor()
        self.lock = threading.Lock()
        self.access_log = access_log
        self.interval = interval
        self.recent: collections.deque[tuple[int, dict[str, Any]]] = collections.deque(maxlen=5000)
        self.seq = 0
        self.ingested = 0
        self.batches = 0
        self.ingest_seconds = 0.0
        self._task: asyncio.Task[None] | None = None
        self.tail_errors = 0

    def _has_icu(self) -> bool:
        try:
            self.db.execute("SELECT current_setting('TimeZone')")
        except duckdb.Error:
            return False
        return True

    # tailing -----------------------------------------------------------------------------------------
    async def start(self, access_log: str | None = None) -> bool:
        """Start (once) the tail loop on `access_log`."""
        if access_log:
            self.access_log = access_log
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop())
            return True
        return False

    async def _loop(self) -> None:
        while True:
            try:
                await asyncio.to_thread(self.tail_once)
            except Exception:
                self.tail_errors += 1
            await asyncio.sleep(self.interval)

    def tail_once(self) -> int:
        """Read what Squid appended since the stored offset; returns the rows ingested."""
        if not self.access_log or not os.path.exists(self.access_log):
            return 0
        st = os.stat(self.access_log)
        row = self.tail_db.execute(
            'SELECT inode, "offset" FROM tail_state WHERE path = ?', [self.access_log]
        ).fetchone()
        inode, offset = (row[0], row[1]) if row else (st.st_ino, 0)
        if inode != st.st_ino or st.st_size < offset:
            offset = 0
        if st.st_size == offset:
            return 0
        with open(self.access_log, "rb") as fh:
            fh.seek(offset)
            chunk = fh.read(MAX_BATCH_BYTES)
        end = chunk.rfind(b"\n")
        if end < 0:
            return 0
        chunk = chunk[: end + 1]
        staging = Path(self.db_path).with_suffix(".batch")
        staging.write_bytes(chunk)
        self.tail_db.execute("BEGIN")
        try:
            self._stage_raw(str(staging))
            count = self._insert_batch(self.tail_db)
            self.tail_db.execute(
                "INSERT OR REPLACE INTO tail_state VALUES (?, ?, ?)", [self.access_log, st.st_ino, offset + len(chunk)]
            )
            self.tail_db.execute("COMMIT")
        except Exception:
            self.tail_db.execute("ROLLBACK")
            raise
        finally:
            staging.unlink(missing_ok=True)
        self._publish_batch(self.tail_db)
        return count

    def _stage_raw(self, path: str) -> None:
        """Parse access-log lines in DuckDB (no Python per line) into the temporary table `batch`."""
        self.tail_db.execute(
            "CREATE OR REPLACE TEMP TABLE batch AS WITH raw AS (SELECT string_split(line, ' ') p FROM read_csv(?, "
            "delim = chr(1), quote = '', escape = '', header = false, columns = {'line': 'VARCHAR'}, "
            "auto_detect = false)), f AS (SELECT TRY_CAST(p[1] AS DOUBLE) t, p[2] client, p[3] method, "
            "TRY_CAST(p[4] AS INTEGER) status, p[5] squid_status, TRY_CAST(p[6] AS BIGINT) bytes_in, "
            "TRY_CAST(p[7] AS BIGINT) bytes_out, TRY_CAST(p[8] AS INTEGER) elapsed_ms, p[9] rule, p[10] url, "
            "trim(array_to_string(list_slice(p, 11, len(p)), ' '), '\"') agent FROM raw WHERE len(p) >= 10) "
            "SELECT make_timestamp((t * 1000000)::BIGINT) ts, client, method, status, squid_status, bytes_in, "
            "bytes_out, elapsed_ms, contains(squid_status, 'DENIED') blocked, nullif(rule, '-') rule, url, "
            "lower(CASE WHEN method = 'CONNECT' OR NOT contains(url, '://') THEN trim(regexp_replace(url, "
            "':[0-9]+$', ''), '[]') ELSE trim(regexp_extract(url, ?, 1), '[]') END) host, "
            "CASE WHEN agent IN ('', '-') THEN NULL ELSE left(agent, 300) END agent FROM f "
            "WHERE t IS NOT NULL AND status IS NOT NULL AND bytes_in IS NOT NULL AND bytes_out IS NOT NULL "
            "AND elapsed_ms IS NOT NULL AND method <> '-'",
            [path, HOST_PATTERN],
        )

    def _publish_batch(self, conn: duckdb.DuckDBPyConnection) -> None:
        rows = conn.execute(
            f"SELECT epoch_ms(ts) / 1000.0, {', '.join(c for c in COLUMNS if c != 'ts')} FROM batch "
            "ORDER BY ts DESC LIMIT ?",
            [self.recent.maxlen],
        ).fetchall()
        self._publish([Record(*row) for row in reversed(rows)])

    def ingest(self, records: list[Record], publish: bool = True) -> int:
        """Insert already-parsed records (bench loaders and tests use this)."""
        self.db.execute("BEGIN")
        self._insert(records)
        self.db.execute("COMMIT")
        if publish:
            self._publish(records)
        return len(records)

    def _insert(self, records: list[Record]) -> None:
        if not records:
            return
        cols = list(
            zip(
                *[
                    (
                        int(r.ts * 1_000_000),
                        r.client,
                        r.method,
                        r.status,
                        r.squid_status,
                        r.bytes_in,
                        r.bytes_out,
                        r.elapsed_ms,
                        r.blocked,
                        r.rule,
                        r.url,
                        r.host,
                        r.agent,
                    )
                    for r in records
                ],
                strict=True,
            )
        )
        self.db.execute(
            "CREATE OR REPLACE TEMP TABLE batch AS SELECT make_timestamp(unnest($1)) ts, unnest($2) client, "
            "unnest($3) method, unnest($4)::INTEGER status, unnest($5) squid_status, unnest($6)::BIGINT bytes_in, "
            "unnest($7)::BIGINT bytes_out, unnest($8)::INTEGER elapsed_ms, unnest($9)::BOOLEAN blocked, "
            "unnest($10)::VARCHAR rule, unnest($11) url, unnest($12) host, unnest($13)::VARCHAR agent",
            [list(c) for c in cols],
        )
        self._insert_batch(self.db)

    def _insert_batch(self, conn: duckdb.DuckDBPyConnection) -> int:
        """Append the staged `batch` to `logs` and aggregate it into every rollup."""
        started = time.perf_counter()
        count = int((conn.execute("SELECT count(*) FROM batch").fetchone() or (0,))[0])
        conn.execute(
            "INSERT INTO logs (ts, client, method, status, squid_status, bytes_in, bytes_out, elapsed_ms, blocked, "
            "rule, url, host, agent) SELECT * FROM batch"
        )
        for table, query in ROLLUPS.items():
            conn.execute(f"INSERT INTO {table} " + query.format(src="batch"))
        self.batches += 1
        self.ingested += count
        if self.batches % 50 == 0:
            self.compact(conn)
        self.ingest_seconds += time.perf_counter() - started
        return count

    def compact(self, conn: duckdb.DuckDBPyConnection | None = None) -> None:
        """Merge the per-batch rollup rows (queries sum them either way; this keeps them small)."""
        db = conn or self.db
        for table, query in COMPACT.items():
            db.execute(f"CREATE OR REPLACE TEMP TABLE compacted AS {query}")
            db.execute(f"DELETE FROM {table}")
            db.execute(f"INSERT INTO {table} SELECT * FROM compacted")

    def _publish(self, records: list[Record]) -> None:
        with self.lock:
            for r in records:
                self.seq += 1
                self.recent.append((self.seq, r.message()))

    def since(self, seq: int, limit: int = 500) -> tuple[int, list[dict[str, Any]]]:
        """Rows of the stream after `seq` (at most `limit`); a reader that fell behind skips ahead."""
        with self.lock:
            if seq > self.seq:
                seq = 0
            rows = [m for s, m in self.recent if s > seq]
            current = self.seq
        if len(rows) > limit:
            rows = rows[-limit:]
        return current, rows

    def status(self) -> dict[str, Any]:
        return {
            "access_log": self.access_log,
            "tailing": self._task is not None and not self._task.done(),
            "ingested": self.ingested,
            "batches": self.batches,
            "rows_per_second": round(self.ingested / self.ingest_seconds, 1) if self.ingest_seconds else None,
            "tail_errors": self.tail_errors,
            "seq": self.seq,
        }

    # queries -----------------------------------------------------------------------------------------
    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """A read-only SELECT (the analytics module builds them; callers never pass user SQL)."""
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            raise ValueError("only SELECT queries")
        return self.db.execute(sql, params or []).fetchall()

    def queries(self, items: list[tuple[str, list[Any]]]) -> list[list[tuple[Any, ...]]]:
        """Several SELECTs in one actor call."""
        return [self.query(sql, params) for sql, params in items]

    def delete_before(self, cutoff_epoch: float | None) -> int:
        """Delete rows older than `cutoff_epoch` (None: every row), rollups included."""
        self.db.execute("BEGIN")
        if cutoff_epoch is None:
            deleted = (self.db.execute("SELECT count(*) FROM logs").fetchone() or (0,))[0]
            for table in ("logs", *ROLLUPS):
                self.db.execute(f"DELETE FROM {table}")
        else:
            cut = [int(cutoff_epoch * 1_000_000)]
            deleted = (
                self.db.execute("SELECT count(*) FROM logs WHERE ts < make_timestamp(?)", cut).fetchone() or (0,)
            )[0]
            self.db.execute("DELETE FROM logs WHERE ts < make_timestamp(?)", cut)
            self.db.execute("DELETE FROM r_minute WHERE minute < date_trunc('minute', make_timestamp(?))", cut)
            for table in ("r_domain", "r_client", "r_rule", "r_agent"):
                self.db.execute(f"DELETE FROM {table} WHERE hour < date_trunc('hour', make_timestamp(?))", cut)
        self.db.execute("COMMIT")
        return int(deleted)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        with contextlib.suppress(duckdb.Error):
            self.db.execute("CHECKPOINT")
