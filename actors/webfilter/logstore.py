"""The log store actor: tails Squid's access log into DuckDB and feeds the live stream.

Rows land in `logs`; each batch is also aggregated into narrow rollups (per minute,
and per hour by domain, client, rule and method/agent) that the analytics read, so a
dashboard query scans thousands of rollup rows, not millions of log rows. The tail
offset (with the file's inode) is kept in the database, so a restart neither loses
nor repeats lines. Timestamps are UTC throughout.

Analytics answers are memoised per data version: every committed batch (and every delete)
bumps `version`; a cached answer is served only while the version it was computed at is
current, and the analytics pass time bounds aligned to their bucket (hour, minute, day), so
a cached answer is exactly what the query would return. The questions asked in the last
minute are re-answered by the tailer inside each batch's transaction, before it commits, and
published with the new version, so a dashboard being watched always reads a ready answer. Each answer is read from one snapshot (one
read transaction), so the parts of a summary agree with each other.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import duckdb

from actors.webfilter.dnslog import Assembler, DnsRow
from actors.webfilter.logparse import COLUMNS, Record, mask_ip
from actors.webfilter.logpolicy import CLIENT_TABLES, LogSettings, mask_clients, rotated_copy
from actors.webfilter.proxy import ProxyOwner
from rayfleet.state import ActorHandle, call

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
CREATE TABLE IF NOT EXISTS recent_blocks (id BIGINT, ts TIMESTAMP, client VARCHAR, url VARCHAR, rule VARCHAR);
CREATE TABLE IF NOT EXISTS tail_state (path VARCHAR PRIMARY KEY, inode BIGINT, "offset" BIGINT);
CREATE SEQUENCE IF NOT EXISTS dns_id;
CREATE TABLE IF NOT EXISTS dns_logs (id BIGINT DEFAULT nextval('dns_id'), ts TIMESTAMP, client VARCHAR,
    name VARCHAR, qtype VARCHAR, outcome VARCHAR, answer VARCHAR, upstream VARCHAR, blocked BOOLEAN, rule VARCHAR,
    source VARCHAR);
ALTER TABLE dns_logs ADD COLUMN IF NOT EXISTS group_name VARCHAR;
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
RECENT_BLOCKS = 1000  # blocked rows kept in `recent_blocks` (the dashboard shows the newest 10)
MAX_BATCH_BYTES = 8 * 1024 * 1024
HOT_SECONDS = 60.0  # a question asked this recently is re-answered after each batch
MAX_HOT = 32  # at most this many distinct questions are kept and re-answered (the oldest asked go first)
Items = list[tuple[str, list[Any]]]
HOST_PATTERN = r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@?#]*@)?(\[[^\]]*\]|[^:/?#]*)"


def _select_only(sql: str) -> None:
    if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
        raise ValueError("only SELECT queries")


class LogStore:
    """DuckDB log store + access-log tailer + ring buffer of recent rows for the stream."""

    def __init__(
        self,
        db_path: str,
        access_log: str | None = None,
        interval: float = 0.2,
        settings: Callable[[], LogSettings] | None = None,
        retention_interval: float = 86400.0,
        clock: Callable[[], float] = time.time,
        rotate_bytes: int = 0,
    ) -> None:
        """`settings` reads `gdpr_mode` and `log_retention_days` (from `config.db`) once per turn; the
        retention runs at the first turn and then every `retention_interval` seconds of `clock`; a tailed
        file over `rotate_bytes` (0: never) is rotated by the proxy actor that owns its writer."""
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
        self.db_path = db_path
        self.db = duckdb.connect(db_path)
        self.db.execute("SET TimeZone = 'UTC'") if self._has_icu() else None
        created = not self.db.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = 'recent_blocks'"
        ).fetchone()
        self.db.execute(SCHEMA)
        if created:  # a database from before `recent_blocks`
            self.db.execute(f"INSERT INTO recent_blocks {self._newest_blocks('logs')}")
        # the tailer writes through its own connection from a worker thread, so queries never wait for a
        # large chunk to be ingested (DuckDB connections to one database may be used concurrently)
        self.tail_db = self.db.cursor()
        self.lock = threading.Lock()
        self.access_log = access_log
        self.dns_log: str | None = None
        self.rules: ActorHandle[ProxyOwner] | None = None
        self.dns = Assembler()
        self.dns_ingested = 0
        self.interval = interval
        self.settings_source = settings
        self.settings = LogSettings()
        self.turn = asyncio.Lock()  # one tail turn at a time; a settings reload waits for the turn in flight
        self.retention_interval = retention_interval
        self.clock = clock
        self.last_retention: float | None = None
        self.retention: dict[str, Any] = {"runs": 0, "last_run": None, "last_deleted": None}
        self.rotate_bytes = rotate_bytes
        self.rotations = {"access": 0, "dns": 0}
        self.rotation_asked: dict[str, int] = {}  # per file, the inode the last rotation was asked for
        self.recent: collections.deque[tuple[int, dict[str, Any]]] = collections.deque(maxlen=5000)
        self.seq = 0
        self.ingested = 0
        self.batches = 0
        self.ingest_seconds = 0.0
        self._task: asyncio.Task[None] | None = None
        self.tail_errors = 0
        self.chunks_read = 0  # chunks `_unread` handed to a tail, both files: a turn that read none changed nothing
        self.idle_turns = 0
        self._quiet: tuple[tuple[int, int] | None, ...] | None = None  # the files as the last quiet turn left them
        self.version = 0
        self.answers: dict[str, tuple[int, list[list[tuple[Any, ...]]]]] = {}
        self.hot: dict[str, tuple[Items, float]] = {}
        self.cache_hits = 0
        self.cache_misses = 0
        self.refresh_seconds = 0.0

    def _has_icu(self) -> bool:
        try:
            self.db.execute("SELECT current_setting('TimeZone')")
        except duckdb.Error:
            return False
        return True

    # tailing -----------------------------------------------------------------------------------------
    async def start(
        self,
        access_log: str | None = None,
        dns_log: str | None = None,
        rules: ActorHandle[ProxyOwner] | None = None,
        dns_sinkhole: str | None = None,
    ) -> bool:
        """Start (once) the tail loop on `access_log` and dnsmasq's query log `dns_log`; `rules` (the proxy
        actor) says which blacklist entry decided each blocked DNS answer; an answer dnsmasq forwarded to
        `dns_sinkhole` (`addr#port`) is a blocked one (and so is one forwarded to the address the proxy actor
        names when a batch holds an answer forwarded to an unknown loopback address: a restarted data plane
        may have moved its sinkhole)."""
        if dns_sinkhole:
            self.dns.sinkholes.add(dns_sinkhole)
        if access_log:
            self.access_log = access_log
        if dns_log:
            self.dns_log = dns_log
        if rules is not None:
            self.rules = rules
        self._quiet = None  # other files, perhaps: the next turn looks
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop())
            return True
        return False

    async def _loop(self) -> None:
        while True:
            try:
                # retention and rotation use the tailer's connection too, so they stay inside the turn: a
                # clear or a masking from the API (which take the turn) never shares that connection
                async with self.turn:
                    if self._turn_needed():
                        await self._full_turn()
                    else:
                        self.idle_turns += 1
            except Exception:
                self._quiet = None
                self.tail_errors += 1
            await asyncio.sleep(self.interval)

    async def _full_turn(self) -> None:
        """Settings, both tails, retention, rotation; then note whether the turn found the files unchanged."""
        files, chunks = self._files_seen(), self.chunks_read
        await self._read_settings()
        await asyncio.to_thread(self.tail_once)
        await self.tail_dns_once()
        await self.apply_retention()
        await self._rotate_full()
        self._quiet = files if self.chunks_read == chunks and files == self._files_seen() else None

    def _turn_needed(self) -> bool:
        """Whether a turn could do anything. A turn that read no chunk leaves the tail offsets as they were,
        so while the tailed files (and the copies a rotation renames them to) keep their inode and size, the
        next turn would read nothing either: it is skipped (a stat per file instead of two DuckDB queries, a
        settings read and three thread hops, five times a second on an idle filter). Retention runs when due."""
        return self._quiet is None or self._retention_due() or self._files_seen() != self._quiet

    def _files_seen(self) -> tuple[tuple[int, int] | None, ...]:
        """(inode, size) of each tailed file and of its newest rotated copy (`.0`), None for a missing one."""
        seen: list[tuple[int, int] | None] = []
        for path in (self.access_log, self.dns_log):
            for name in (path, f"{path}.0") if path else ():
                try:
                    stat = os.stat(name)
                except OSError:
                    seen.append(None)
                else:
                    seen.append((stat.st_ino, stat.st_size))
        return tuple(seen)

    def _retention_due(self) -> bool:
        return self.last_retention is None or self.clock() - self.last_retention >= self.retention_interval

    async def _read_settings(self) -> None:
        if self.settings_source is not None:
            self.settings = await asyncio.to_thread(self.settings_source)

    async def reload_settings(self) -> dict[str, Any]:
        """Read the settings now, after the tail turn in flight: once this returns, every line ingested is
        masked if `gdpr_mode` is on (the replicas call it when they change a setting)."""
        async with self.turn:
            await self._read_settings()
        return {"gdpr_mode": self.settings.gdpr_mode, "retention_days": self.settings.retention_days}

    async def apply_retention(self) -> dict[str, int] | None:
        """Delete rows older than `log_retention_days` when `retention_interval` has passed since the last
        run (the first turn runs it); the freed blocks are reused by later batches (CHECKPOINT)."""
        if not self._retention_due():
            return None
        now = self.clock()
        self.last_retention = now
        cutoff = now - self.settings.retention_days * 86400
        deleted = await asyncio.to_thread(self.delete_before, cutoff, self.tail_db)
        self.retention = {"runs": self.retention["runs"] + 1, "last_run": now, "last_deleted": deleted}
        with contextlib.suppress(duckdb.Error):  # another writer active: the next checkpoint reclaims the space
            await asyncio.to_thread(self.tail_db.execute, "CHECKPOINT")
        return deleted

    async def _rotate_full(self) -> None:
        """Have the proxy actor rotate a tailed file past `rotate_bytes`: Squid's access log (Squid's own
        `logfile_rotate`) or dnsmasq's query log. The tailer finishes the renamed file before it reads the new
        one (`_unread`). A rotation is asked for only once the tailer reads the current file and the previous
        request took effect, so at most one renamed file is unread and none is dropped before it is read
        (signals sent faster than Squid handles them would rotate again and again)."""
        if not self.rotate_bytes or self.rules is None:
            return
        files: tuple[tuple[Literal["access", "dns"], str | None], ...] = (
            ("access", self.access_log),
            ("dns", self.dns_log),
        )
        for which, path in files:
            if not path or not os.path.exists(path):
                continue
            current = os.stat(path)
            row = self.tail_db.execute("SELECT inode FROM tail_state WHERE path = ?", [path]).fetchone()
            reading_current = row is not None and row[0] == current.st_ino
            if (
                current.st_size > self.rotate_bytes
                and reading_current
                and self.rotation_asked.get(which) != current.st_ino
            ):
                self.rotation_asked[which] = current.st_ino
                if await call(self.rules, ProxyOwner.rotate_log, which):
                    self.rotations[which] += 1

    def _unread(self, path: str | None) -> tuple[int, int, bytes] | None:
        """What was appended to `path` since the stored offset, up to the last whole line: (inode, offset the
        chunk starts at, chunk), or None. After a rotation (another inode at `path`) the renamed file
        (`path.0`, ..., found by its inode) is read to its end first, then the new one from 0; a truncated
        file is read from 0."""
        if not path:
            return None
        row = self.tail_db.execute('SELECT inode, "offset" FROM tail_state WHERE path = ?', [path]).fetchone()
        current = os.stat(path) if os.path.exists(path) else None
        if row is not None and (current is None or current.st_ino != row[0]):
            old = rotated_copy(path, row[0])
            if old is not None:
                rest = self._chunk(old, row[0], row[1])
                if rest is not None:
                    return rest
        if current is None:
            return None
        offset = row[1] if row is not None and row[0] == current.st_ino and current.st_size >= row[1] else 0
        return self._chunk(Path(path), current.st_ino, offset)

    @staticmethod
    def _chunk(path: Path, inode: int, offset: int) -> tuple[int, int, bytes] | None:
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return None
        if size <= offset:
            return None
        with open(path, "rb") as fh:
            fh.seek(offset)
            chunk = fh.read(MAX_BATCH_BYTES)
        end = chunk.rfind(b"\n")
        if end < 0:
            return None
        return inode, offset, chunk[: end + 1]

    def _advance(self, path: str, inode: int, offset: int) -> None:
        self.tail_db.execute("INSERT OR REPLACE INTO tail_state VALUES (?, ?, ?)", [path, inode, offset])

    def tail_once(self) -> int:
        """Read what Squid appended since the stored offset; returns the rows ingested."""
        unread = self._unread(self.access_log)
        if unread is None or self.access_log is None:
            return 0
        self.chunks_read += 1
        inode, offset, chunk = unread
        staging = Path(self.db_path).with_suffix(".batch")
        staging.write_bytes(chunk)
        try:
            with self._writing(self.tail_db):
                self._stage_raw(str(staging))
                count = self._insert_batch(self.tail_db)
                self._advance(self.access_log, inode, offset + len(chunk))
        finally:
            staging.unlink(missing_ok=True)
        self._publish_batch(self.tail_db)
        return count

    async def tail_dns_once(self) -> int:
        """Read what dnsmasq appended to its query log: one row per answered query, each blocked one with the
        blacklist entry and source (`domain-blacklist`, `subscription:<id>`) the proxy actor credits it to;
        rows, rule and offset are written in one transaction. Returns the rows written."""
        unread = await asyncio.to_thread(self._unread, self.dns_log)
        if unread is None or self.dns_log is None:
            return 0
        self.chunks_read += 1
        inode, offset, chunk = unread
        rows = self.dns.feed(chunk.decode("utf-8", "replace").splitlines())
        unknown = self.dns.unknown_loopback_upstreams(rows)
        if unknown and self.rules is not None:  # asked only then: the sinkhole moves with a restarted data plane
            sinkhole = await call(self.rules, ProxyOwner.dns_sinkhole)
            if sinkhole in unknown:
                self.dns.learn_sinkhole(sinkhole, rows)
        if rows and self.rules is not None:  # the client group whose own dnsmasq answered, if one did
            groups = await call(self.rules, ProxyOwner.dns_groups, sorted({row.pid for row in rows}))
            for row in rows:
                row.group = groups.get(row.pid)
        blocked = [row for row in rows if row.blocked]
        if blocked and self.rules is not None:
            names, groups_of = [row.name for row in blocked], [row.group for row in blocked]
            decisions = await call(self.rules, ProxyOwner.attribute_dns, names, groups_of)
            for row, decision in zip(blocked, decisions, strict=True):
                row.rule, row.source = decision if decision else ("dns_blocklist", None)
        for row in blocked:
            row.rule = row.rule or "dns_blocklist"
        if self.settings.gdpr_mode:
            for row in rows:
                row.client = mask_ip(row.client)
        await asyncio.to_thread(self._insert_dns, rows, inode, offset + len(chunk))
        self._publish_messages([row.message() for row in rows])
        return len(rows)

    def _insert_dns(self, rows: list[DnsRow], inode: int, end: int) -> None:
        assert self.dns_log is not None
        columns = list(
            zip(
                *[
                    (int(r.ts * 1_000_000), r.client, r.name, r.qtype, r.outcome, r.answer or None, *r.decided)
                    for r in rows
                ],
                strict=True,
            )
        )
        with self._writing(self.tail_db):
            if rows:  # one statement over column lists: DuckDB inserts row by row far slower
                self.tail_db.execute(
                    "INSERT INTO dns_logs (ts, client, name, qtype, outcome, answer, upstream, blocked, rule, source, "
                    "group_name) SELECT make_timestamp(unnest($1)), unnest($2), unnest($3), unnest($4), unnest($5), "
                    "unnest($6)::VARCHAR, unnest($7)::VARCHAR, unnest($8)::BOOLEAN, unnest($9)::VARCHAR, "
                    "unnest($10)::VARCHAR, unnest($11)::VARCHAR",
                    [list(c) for c in columns],
                )
            self._advance(self.dns_log, inode, end)
        self.dns_ingested += len(rows)

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
        with self._writing(self.db):
            self._insert(records)
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
        if self.settings.gdpr_mode:  # masked before anything stores it: `logs`, rollups, recent blocks, stream
            mask_clients(conn, "batch")
        count = int((conn.execute("SELECT count(*) FROM batch").fetchone() or (0,))[0])
        last = (conn.execute("SELECT coalesce(max(id), 0) FROM logs").fetchone() or (0,))[0]
        conn.execute(
            "INSERT INTO logs (ts, client, method, status, squid_status, bytes_in, bytes_out, elapsed_ms, blocked, "
            "rule, url, host, agent) SELECT * FROM batch"
        )
        # ids only grow: the batch's rows are the ones above `last` (zone maps skip every older row group)
        conn.execute(
            "INSERT INTO recent_blocks SELECT id, ts, client, url, rule FROM logs WHERE id > ? AND blocked", [last]
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
        """Merge the per-batch rollup rows (queries sum them either way; this keeps them small) and keep the
        newest `RECENT_BLOCKS` blocked rows."""
        db = conn or self.db
        for table, query in COMPACT.items():
            db.execute(f"CREATE OR REPLACE TEMP TABLE compacted AS {query}")
            db.execute(f"DELETE FROM {table}")
            db.execute(f"INSERT INTO {table} SELECT * FROM compacted")
        db.execute(
            "DELETE FROM recent_blocks WHERE id < (SELECT coalesce(min(id), 0) FROM (SELECT id FROM recent_blocks "
            f"ORDER BY id DESC LIMIT {RECENT_BLOCKS}))"
        )

    @staticmethod
    def _newest_blocks(src: str) -> str:
        return f"SELECT id, ts, client, url, rule FROM {src} WHERE blocked ORDER BY id DESC LIMIT {RECENT_BLOCKS}"

    def rebuild(self) -> None:
        """Recompute every rollup and `recent_blocks` from `logs` (after a bulk load written straight into
        `logs`), then drop the memoised answers."""
        with self._writing(self.db):
            for table, query in ROLLUPS.items():
                self.db.execute(f"DELETE FROM {table}")
                self.db.execute(f"INSERT INTO {table} " + query.format(src="logs"))
            self.db.execute("DELETE FROM recent_blocks")
            self.db.execute(f"INSERT INTO recent_blocks {self._newest_blocks('logs')}")

    def _publish(self, records: list[Record]) -> None:
        self._publish_messages([r.message() for r in records])

    def _publish_messages(self, messages: list[dict[str, Any]]) -> None:
        """Append rows (HTTP or DNS, told apart by `source`) to the live stream's ring."""
        with self.lock:
            for message in messages:
                self.seq += 1
                self.recent.append((self.seq, message))

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
            "dns_log": self.dns_log,
            "dns_ingested": self.dns_ingested,
            "dns_pending": len(self.dns.open),
            "tailing": self._task is not None and not self._task.done(),
            "ingested": self.ingested,
            "batches": self.batches,
            "rows_per_second": round(self.ingested / self.ingest_seconds, 1) if self.ingest_seconds else None,
            "tail_errors": self.tail_errors,
            "idle_turns": self.idle_turns,
            "gdpr_mode": self.settings.gdpr_mode,
            "retention": self.retention,
            "rotations": self.rotations,
            "seq": self.seq,
            "analytics_cache": {
                "version": self.version,
                "hits": self.cache_hits,
                "misses": self.cache_misses,
                "refresh_seconds": round(self.refresh_seconds, 3),
            },
        }

    # queries -----------------------------------------------------------------------------------------
    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """A read-only SELECT (the analytics module builds them; callers never pass user SQL)."""
        _select_only(sql)
        return self.db.execute(sql, params or []).fetchall()

    def queries(self, items: Items) -> list[list[tuple[Any, ...]]]:
        """Several SELECTs in one actor call."""
        return [self.query(sql, params) for sql, params in items]

    def answer(self, items: Items) -> list[list[tuple[Any, ...]]]:
        """Several SELECTs over the rollups, read from one snapshot and memoised until the data changes.

        Parameters must be stable for the answer to be reused (the analytics pass bucket-aligned
        bounds); the same items asked again before the next batch get the same rows."""
        key = repr(items)
        with self.lock:
            version = self.version
            cached = self.answers.get(key)
            if cached is not None and cached[0] == version:
                self.cache_hits += 1
                self._asked(key, items)
                return cached[1]
            self.cache_misses += 1
        result = self._snapshot(items)  # a question that fails is never kept, so never re-answered
        with self.lock:
            self._asked(key, items)
            if self.version == version:
                self.answers[key] = (version, result)
        return result

    def _asked(self, key: str, items: Items) -> None:
        """Record `key` as the most recently asked question (caller holds the lock); the oldest beyond
        `MAX_HOT` are forgotten."""
        self.hot.pop(key, None)
        self.hot[key] = (items, time.monotonic())
        while len(self.hot) > MAX_HOT:
            stale = next(iter(self.hot))
            del self.hot[stale]
            self.answers.pop(stale, None)

    def _snapshot(self, items: Items) -> list[list[tuple[Any, ...]]]:
        for sql, _ in items:
            _select_only(sql)
        conn = self.db.cursor()
        try:
            conn.execute("BEGIN TRANSACTION")
            result = [conn.execute(sql, params).fetchall() for sql, params in items]
            conn.execute("COMMIT")
        finally:
            conn.close()
        return result

    def _reanswer(self, conn: duckdb.DuckDBPyConnection) -> dict[str, list[list[tuple[Any, ...]]]]:
        """Inside the writer's transaction, before it commits: the answers, with the new rows, to the questions
        asked in the last `HOT_SECONDS` (in the writer's thread: the tailer's, never a reader's)."""
        now = time.monotonic()
        with self.lock:
            self.hot = {k: v for k, v in self.hot.items() if now - v[1] < HOT_SECONDS}
            hot = list(self.hot.items())
        started = time.perf_counter()
        fresh: dict[str, list[list[tuple[Any, ...]]]] = {}
        for key, (items, _) in hot:
            try:
                fresh[key] = [conn.execute(sql, params).fetchall() for sql, params in items]
            except duckdb.Error:
                # a failed statement aborts DuckDB's transaction: forget the question and let the write roll
                # back (the tailer retries the same lines at its next turn, without it)
                with self.lock:
                    self.hot.pop(key, None)
                raise
        self.refresh_seconds += time.perf_counter() - started
        return fresh

    @contextlib.contextmanager
    def _writing(self, conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
        """One write transaction; the watched questions are re-answered inside it, before the commit, and
        published with the new version right after it. Any error rolls everything back."""
        conn.execute("BEGIN")
        try:
            yield
            fresh = self._reanswer(conn)
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                conn.execute("ROLLBACK")
            raise
        self._committed(fresh)

    def _committed(self, fresh: dict[str, list[list[tuple[Any, ...]]]]) -> None:
        """Right after the commit: the new version and its answers replace the old ones at once, so a watched
        question always has an answer ready."""
        with self.lock:
            self.version += 1
            self.answers = {key: (self.version, result) for key, result in fresh.items()}

    async def clear(self, cutoff_epoch: float | None) -> dict[str, int]:
        """`delete_before` for the API, between two tail turns: a batch in flight re-answers the watched
        questions from its own snapshot and publishes them after its commit, so a delete inside a turn
        would leave its rows, or at least its answers, standing."""
        async with self.turn:
            return await asyncio.to_thread(self.delete_before, cutoff_epoch, self.tail_db)

    def delete_before(
        self, cutoff_epoch: float | None, conn: duckdb.DuckDBPyConnection | None = None
    ) -> dict[str, int]:
        """Delete HTTP and DNS rows older than `cutoff_epoch` (None: every row), rollups included; returns the
        rows deleted per source (`http`, `dns`). `conn`: the tailer's connection when the tail loop calls it
        from its worker thread (a DuckDB connection serves one call at a time)."""
        db = conn or self.db
        deleted: dict[str, int] = {}
        cut = [int(cutoff_epoch * 1_000_000)] if cutoff_epoch is not None else []
        where = "WHERE ts < make_timestamp(?)" if cutoff_epoch is not None else ""
        with self._writing(db):
            for source, table in (("http", "logs"), ("dns", "dns_logs")):
                deleted[source] = int((db.execute(f"SELECT count(*) FROM {table} {where}", cut).fetchone() or (0,))[0])
                db.execute(f"DELETE FROM {table} {where}", cut)
            db.execute(f"DELETE FROM recent_blocks {where}", cut)
            if cutoff_epoch is None:
                for table in ROLLUPS:
                    db.execute(f"DELETE FROM {table}")
            else:
                db.execute("DELETE FROM r_minute WHERE minute < date_trunc('minute', make_timestamp(?))", cut)
                for table in ("r_domain", "r_client", "r_rule", "r_agent"):
                    db.execute(f"DELETE FROM {table} WHERE hour < date_trunc('hour', make_timestamp(?))", cut)
        return deleted

    async def mask_stored(self) -> dict[str, int]:
        """Mask the client addresses of rows stored before `gdpr_mode` was switched on (every table that keeps
        one), in one transaction between two tail turns; returns the rows changed in `logs` (`http`) and
        `dns_logs` (`dns`)."""
        async with self.turn:
            changed = await asyncio.to_thread(self._mask_stored)
        return {"http": changed["logs"], "dns": changed["dns_logs"]}

    def _mask_stored(self) -> dict[str, int]:
        conn = self.db.cursor()
        try:
            with self._writing(conn):
                return {table: mask_clients(conn, table) for table in CLIENT_TABLES}
        finally:
            conn.close()

    def table_stats(self) -> dict[str, Any]:
        """The DuckDB file's size and the rows of `logs` and `dns_logs` (what retention bounds)."""
        counts = self.db.execute("SELECT (SELECT count(*) FROM logs), (SELECT count(*) FROM dns_logs)").fetchone()
        wal = Path(self.db_path + ".wal")
        return {
            "file_bytes": os.path.getsize(self.db_path),
            "wal_bytes": wal.stat().st_size if wal.exists() else 0,
            "log_rows": int(counts[0]) if counts else 0,
            "dns_log_rows": int(counts[1]) if counts else 0,
            "retention_days": self.settings.retention_days,
            "retention": self.retention,
        }

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        with contextlib.suppress(duckdb.Error):
            self.db.execute("CHECKPOINT")
