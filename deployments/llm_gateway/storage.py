"""Request and spend records, written off the request path in batches.

Each answered request is one row: when, the key (its fingerprint, and for a virtual key its
id and team), route, model, endpoint, tokens, cost. ``/api/v1/spend`` sums these rows
(``spend.SpendQuery``).

``storage.type: sqlite`` (default, ``<data_dir>/gateway.db``) or ``postgres`` (DSN from
``storage.dsn_env`` or ``storage.dsn``). Records queue in memory and a background task
writes them every ``flush_interval``; when the database is down the gateway keeps
serving, the queue is kept (bounded, oldest dropped first) and retried. Rows older
than ``gdpr.retention_days`` are purged once a day when ``gdpr.auto_purge`` is on.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from deployments.llm_gateway.spend import SpendQuery
from rayfleet.logs import get_logger
from rayfleet.sqlite import connect
from rayfleet.tasks import Wake

if TYPE_CHECKING:
    from psycopg import AsyncConnection

T = TypeVar("T")

log = get_logger("llm_gateway")

COLUMNS = (
    "ts",
    "request_id",
    "tenant",
    "route",
    "model",
    "endpoint",
    "status",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_ms",
    "ttft_ms",
    "cache",
    "stream",
    "fallback",
    "key_id",
    "team",
)


@dataclass(slots=True)
class Record:
    ts: float
    request_id: str
    tenant: str
    route: str
    model: str
    endpoint: str
    status: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_ms: float
    ttft_ms: float | None
    cache: str
    stream: bool
    fallback: str
    key_id: str | None = None  # the virtual key's id (None: an environment key)
    team: str | None = None  # the virtual key's team


_DDL = (
    "CREATE TABLE IF NOT EXISTS llm_requests (ts DOUBLE PRECISION NOT NULL, request_id TEXT, tenant TEXT,"
    " route TEXT, model TEXT, endpoint TEXT, status INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,"
    " cost_usd DOUBLE PRECISION, latency_ms DOUBLE PRECISION, ttft_ms DOUBLE PRECISION, cache TEXT,"
    " stream BOOLEAN, fallback TEXT)"
)
_INDEX = "CREATE INDEX IF NOT EXISTS llm_requests_ts ON llm_requests(ts)"
# Columns added after the first release: tables made before them get them on open.
_ADDED = (("key_id", "TEXT"), ("team", "TEXT"))
_KEY_INDEX = "CREATE INDEX IF NOT EXISTS llm_requests_key ON llm_requests(key_id, ts)"
_INSERT = f"INSERT INTO llm_requests ({','.join(COLUMNS)}) VALUES "


def _sqlite_migrate(db: sqlite3.Connection) -> None:
    have = {row[1] for row in db.execute("PRAGMA table_info(llm_requests)")}
    for name, kind in _ADDED:
        if name not in have:
            db.execute(f"ALTER TABLE llm_requests ADD COLUMN {name} {kind}")
    db.execute(_KEY_INDEX)


def _day_start(now: float) -> float:
    day = datetime.fromtimestamp(now, tz=UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day.timestamp()


class SQLiteFile:
    """A SQLite database of the gateway (``rayfleet.sqlite``), opened on first use with its schema."""

    def __init__(self, path: Path, schema: tuple[str, ...]) -> None:
        self.path = path
        self.schema = schema
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            db = connect(self.path, autocommit=True, row_factory=False)
            for statement in self.schema:
                db.execute(statement)
            self._db = db
        return self._db

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class SQLiteBackend(SQLiteFile):
    def __init__(self, path: Path) -> None:
        super().__init__(path, (_DDL, _INDEX))
        self._migrated = False

    def _conn(self) -> sqlite3.Connection:
        db = super()._conn()
        if not self._migrated:
            _sqlite_migrate(db)
            self._migrated = True
        return db

    async def write(self, rows: list[Record]) -> None:
        def run() -> None:
            db = self._conn()
            with db:
                db.executemany(_INSERT + f"({','.join('?' * len(COLUMNS))})", [astuple(r) for r in rows])

        await asyncio.to_thread(run)

    async def spent_since(self, since: float) -> float:
        def run() -> float:
            row = (
                self._conn()
                .execute("SELECT COALESCE(SUM(cost_usd),0) FROM llm_requests WHERE ts>=?", (since,))
                .fetchone()
            )
            return float(row[0])

        return await asyncio.to_thread(run)

    async def spend(self, query: SpendQuery) -> list[tuple[Any, ...]]:
        sql, args = query.sql("?")

        def run() -> list[tuple[Any, ...]]:
            return [tuple(row) for row in self._conn().execute(sql, args).fetchall()]

        return await asyncio.to_thread(run)

    async def purge(self, before: float) -> int:
        def run() -> int:
            with self._conn() as db:
                return db.execute("DELETE FROM llm_requests WHERE ts<?", (before,)).rowcount

        return await asyncio.to_thread(run)

    async def close(self) -> None:
        self._close()


class PostgresBackend:
    def __init__(self, dsn: str, connect_timeout: float = 3.0) -> None:
        self.dsn = dsn
        self.connect_timeout = connect_timeout
        self._conn: AsyncConnection[Any] | None = None

    async def _connection(self) -> AsyncConnection[Any]:
        import psycopg

        if self._conn is None or self._conn.closed:
            conn = await psycopg.AsyncConnection.connect(
                self.dsn, autocommit=True, connect_timeout=int(max(1, self.connect_timeout))
            )
            await conn.execute(_DDL)
            await conn.execute(_INDEX)
            for name, kind in _ADDED:
                await conn.execute(f"ALTER TABLE llm_requests ADD COLUMN IF NOT EXISTS {name} {kind}")
            await conn.execute(_KEY_INDEX)
            self._conn = conn
        return self._conn

    async def _run(self, fn: Callable[[AsyncConnection[Any]], Awaitable[T]]) -> T:
        try:
            conn = await self._connection()
            return await fn(conn)
        except Exception:
            if self._conn is not None:
                await self._conn.close()
            self._conn = None
            raise

    async def write(self, rows: list[Record]) -> None:
        sql = _INSERT + f"({','.join(['%s'] * len(COLUMNS))})"

        async def go(conn: AsyncConnection[Any]) -> None:
            async with conn.cursor() as cur:
                await cur.executemany(sql, [astuple(r) for r in rows])

        await self._run(go)

    async def spent_since(self, since: float) -> float:
        async def go(conn: AsyncConnection[Any]) -> float:
            cur = await conn.execute("SELECT COALESCE(SUM(cost_usd),0) FROM llm_requests WHERE ts>=%s", (since,))
            row = await cur.fetchone()
            assert row is not None
            return float(row[0])

        return await self._run(go)

    async def spend(self, query: SpendQuery) -> list[tuple[Any, ...]]:
        sql, args = query.sql("%s")

        async def go(conn: AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            cur = await conn.execute(sql, args)
            return [tuple(row) for row in await cur.fetchall()]

        return await self._run(go)

    async def purge(self, before: float) -> int:
        async def go(conn: AsyncConnection[Any]) -> int:
            cur = await conn.execute("DELETE FROM llm_requests WHERE ts<%s", (before,))
            return cur.rowcount

        return await self._run(go)

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None


class RecordWriter:
    def __init__(
        self,
        backend: SQLiteBackend | PostgresBackend,
        batch_size: int = 200,
        flush_interval: float = 0.5,
        max_queue: int = 50_000,
        retention_days: int | None = 90,
    ) -> None:
        self.backend = backend
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.retention_days = retention_days
        self.queue: deque[Record] = deque(maxlen=max_queue)
        self.healthy = True
        self._last_purge = 0.0
        self._lock: asyncio.Lock | None = None
        self.wake = Wake()  # set by ``add``: the queued records wait for ``flush``

    def add(self, record: Record) -> None:
        self.queue.append(record)
        self.wake.set()

    async def flush(self) -> int:
        """Write what is queued (``written``); records stay queued while the store is down."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            return await self._flush()

    async def _flush(self) -> int:
        written = 0
        while self.queue:
            batch = [self.queue[i] for i in range(min(self.batch_size, len(self.queue)))]
            try:
                await self.backend.write(batch)
            except Exception as exc:
                if self.healthy:
                    log.warning("record store unavailable; records kept in memory", extra={"error": type(exc).__name__})
                self.healthy = False
                return written
            for _ in batch:
                self.queue.popleft()
            written += len(batch)
            self.healthy = True
        return written

    async def purge_if_due(self, now: float) -> None:
        if self.retention_days is None or now - self._last_purge < 86400:
            return
        self._last_purge = now
        removed = await self.backend.purge(now - self.retention_days * 86400)
        if removed:
            log.info("purged old request records", extra={"rows": removed})

    async def today_spend(self) -> float:
        return await self.backend.spent_since(_day_start(time.time()))

    async def flush_queued(self) -> bool:
        """``flush`` for ``BackgroundTasks.when``: True while records wait for the store to come back."""
        await self.flush()
        return bool(self.queue)

    async def purge(self) -> None:
        """The retention purge, once a day (``purge_if_due``), while the store answers."""
        if self.healthy:
            await self.purge_if_due(time.time())

    async def close(self) -> None:
        try:
            await self.flush()
        finally:
            await self.backend.close()


def build_backend(storage_type: str, dsn_env: str, dsn: str, sqlite_path: Path) -> SQLiteBackend | PostgresBackend:
    if storage_type == "postgres":
        value = os.environ.get(dsn_env) or dsn
        if not value:
            raise ValueError(f"storage.type is postgres but neither ${dsn_env} nor storage.dsn is set")
        return PostgresBackend(value)
    return SQLiteBackend(sqlite_path)
