"""Durable actor state: a write-ahead record, replay on restart, snapshots to bound replay.

An actor whose state a user would miss keeps it in a :class:`DurableState` (or the
key/value :class:`DurableMap` built on it). Every change is an *operation*, a JSON
object the actor has already validated; :meth:`DurableState.record` stores it, and only
then applies it to the in-memory state, before the actor method returns. A restarted
actor opens the same stream and gets the state back: the latest snapshot, then every
operation recorded after it. Every ``snapshot_every`` operations the state is written
whole and the operations it covers are deleted, so replay stays short.

Two stores, one schema:
- SQLite (the default): one file per node in WAL mode with ``synchronous=FULL``, so an
  operation that was acknowledged survives the process and the machine;
- PostgreSQL (``RAYFLEET_DURABLE_DSN=postgresql://...``), which any node reaches, for a
  cluster whose actors may restart on another node.

Each opening of a stream takes a new *epoch*. Appends carry the epoch they opened with and
are refused (:class:`Fenced`) once a newer instance has opened the stream, so an actor that
was presumed dead and restarted elsewhere cannot write behind its successor's back.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from rayfleet import paths
from rayfleet.logs import get_logger
from rayfleet.sqlite import connect as sqlite_connect

log = get_logger("durable")

DSN_ENV = "RAYFLEET_DURABLE_DSN"
DEFAULT_SNAPSHOT_EVERY = 1_000
TABLE_PREFIX = "rayfleet_durable"

Op = dict[str, Any]
S = TypeVar("S")

SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE_PREFIX}_streams "
    "(stream TEXT PRIMARY KEY, epoch BIGINT NOT NULL, seq BIGINT NOT NULL, snapshot_seq BIGINT NOT NULL, "
    "snapshot TEXT)",
    f"CREATE TABLE IF NOT EXISTS {TABLE_PREFIX}_records "
    "(stream TEXT NOT NULL, seq BIGINT NOT NULL, op TEXT NOT NULL, PRIMARY KEY (stream, seq))",
)


class Fenced(RuntimeError):
    """A newer instance of this actor opened the stream: this one may no longer write."""


@dataclass(frozen=True)
class Opened:
    """What opening a stream returns: this instance's epoch, the snapshot and the operations after it."""

    epoch: int
    snapshot_seq: int
    snapshot: str | None
    records: list[tuple[int, str]]


class RecordStore(Protocol):
    """Where the operations live. Every method is one transaction."""

    def open_stream(self, stream: str) -> Opened: ...

    def append(self, stream: str, epoch: int, ops: Sequence[str]) -> int: ...

    def snapshot(self, stream: str, epoch: int, seq: int, state: str) -> None: ...

    def close(self) -> None: ...


class _SqlStore(ABC):
    """The SQL both backends run; a subclass gives the connection and the placeholder."""

    placeholder = "?"

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Any]:
        """A cursor inside one transaction: committed on exit, rolled back on an exception."""

    @abstractmethod
    def close(self) -> None: ...

    def _sql(self, text: str) -> str:
        return text.replace("?", self.placeholder)

    def _create(self) -> None:
        # two actors creating the tables at once can collide in PostgreSQL's catalog even with
        # IF NOT EXISTS; the loser's second attempt finds the tables there
        for attempt in (1, 2):
            try:
                with self._transaction() as cur:
                    for statement in SCHEMA:
                        cur.execute(statement)
                return
            except Exception:
                if attempt == 2:
                    raise

    def open_stream(self, stream: str) -> Opened:
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    f"INSERT INTO {TABLE_PREFIX}_streams (stream, epoch, seq, snapshot_seq) VALUES (?, 1, 0, 0) "
                    "ON CONFLICT (stream) DO UPDATE SET epoch = "
                    f"{TABLE_PREFIX}_streams.epoch + 1 RETURNING epoch, snapshot_seq, snapshot"
                ),
                (stream,),
            )
            epoch, snapshot_seq, snapshot = cur.fetchone()
            cur.execute(
                self._sql(f"SELECT seq, op FROM {TABLE_PREFIX}_records WHERE stream = ? AND seq > ? ORDER BY seq"),
                (stream, snapshot_seq),
            )
            records = [(int(seq), str(op)) for seq, op in cur.fetchall()]
        return Opened(int(epoch), int(snapshot_seq), snapshot, records)

    def append(self, stream: str, epoch: int, ops: Sequence[str]) -> int:
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    f"UPDATE {TABLE_PREFIX}_streams SET seq = seq + ? WHERE stream = ? AND epoch = ? RETURNING seq"
                ),
                (len(ops), stream, epoch),
            )
            row = cur.fetchone()
            if row is None:
                raise Fenced(f"stream {stream!r} was opened by a newer instance (this one has epoch {epoch})")
            last = int(row[0])
            first = last - len(ops) + 1
            cur.executemany(
                self._sql(f"INSERT INTO {TABLE_PREFIX}_records (stream, seq, op) VALUES (?, ?, ?)"),
                [(stream, first + i, op) for i, op in enumerate(ops)],
            )
        return last

    def snapshot(self, stream: str, epoch: int, seq: int, state: str) -> None:
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    f"UPDATE {TABLE_PREFIX}_streams SET snapshot_seq = ?, snapshot = ? "
                    "WHERE stream = ? AND epoch = ? AND seq >= ?"
                ),
                (seq, state, stream, epoch, seq),
            )
            if cur.rowcount != 1:
                raise Fenced(f"stream {stream!r} was opened by a newer instance (this one has epoch {epoch})")
            cur.execute(self._sql(f"DELETE FROM {TABLE_PREFIX}_records WHERE stream = ? AND seq <= ?"), (stream, seq))


class SqliteStore(_SqlStore):
    """Operations in one SQLite file (WAL, ``synchronous=FULL``: a commit is on disk when it returns)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)
        self._conn = sqlite_connect(self.path, autocommit=True, row_factory=False)
        self._conn.execute("PRAGMA synchronous=FULL")
        self._create()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()


class PostgresStore(_SqlStore):
    """Operations in PostgreSQL, reachable from every node of a cluster."""

    placeholder = "%s"

    def __init__(self, dsn: str) -> None:
        super().__init__()
        self._dsn = dsn
        self._conn: Any = None
        self._create()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        import psycopg

        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                # a server restart breaks the connection: the next call opens a new one (the call that
                # saw it break failed and was not acknowledged)
                self._conn = psycopg.connect(self._dsn, autocommit=False, connect_timeout=10)
            with self._conn.transaction(), self._conn.cursor() as cur:
                yield cur

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def open_store(dsn: str | None = None) -> RecordStore:
    """The store named by ``dsn`` (or ``RAYFLEET_DURABLE_DSN``): ``postgresql://...``,
    ``sqlite:///path/file.sqlite3``, or by default ``var/durable/state.sqlite3`` under the home."""
    dsn = dsn if dsn is not None else os.environ.get(DSN_ENV, "")
    if dsn.startswith(("postgresql://", "postgres://")):
        return PostgresStore(dsn)
    if dsn.startswith("sqlite:///"):
        return SqliteStore(paths.resolve(dsn.removeprefix("sqlite:///")))
    if dsn:
        raise ValueError(f"{DSN_ENV} must be postgresql://... or sqlite:///path (got a {dsn.split(':')[0]!r} URL)")
    return SqliteStore(paths.var_dir("durable") / "state.sqlite3")


class DurableState(Generic[S]):
    """State rebuilt from its own write-ahead record.

    ``apply(state, op)`` changes ``state`` in place for one operation; it must be
    deterministic and must not fail for an operation the actor validated, because replay
    runs it again. ``dump``/``load`` turn the state into JSON and back, for snapshots.
    """

    def __init__(
        self,
        store: RecordStore,
        stream: str,
        *,
        initial: Callable[[], S],
        apply: Callable[[S, Op], None],
        dump: Callable[[S], Any],
        load: Callable[[Any], S],
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ) -> None:
        if snapshot_every < 1:
            raise ValueError("snapshot_every must be at least 1")
        self.store = store
        self.stream = stream
        self._apply = apply
        self._dump = dump
        self._snapshot_every = snapshot_every
        opened = store.open_stream(stream)
        self.epoch = opened.epoch
        self.state: S = load(json.loads(opened.snapshot)) if opened.snapshot is not None else initial()
        self.replayed = 0
        for seq, op in opened.records:
            self._replay(seq, json.loads(op))
        self.seq = opened.records[-1][0] if opened.records else opened.snapshot_seq
        self._snapshot_seq = opened.snapshot_seq

    def _replay(self, seq: int, op: Op) -> None:
        try:
            self._apply(self.state, op)
        except Exception as exc:  # a bad record must not keep the actor from starting
            log.error(
                "durable replay skipped an operation", extra={"stream": self.stream, "seq": seq, "error": repr(exc)}
            )
            return
        self.replayed += 1

    def record(self, op: Op) -> None:
        """Store ``op``, then apply it: when this returns, the change survives a restart."""
        self.record_many([op])

    def record_many(self, ops: Sequence[Op]) -> None:
        """Store several operations in one transaction (all or none), then apply them in order."""
        if not ops:
            return
        encoded = [json.dumps(op, separators=(",", ":"), sort_keys=True) for op in ops]
        self.seq = self.store.append(self.stream, self.epoch, encoded)
        for op in ops:
            self._apply(self.state, op)
        if self.seq - self._snapshot_seq >= self._snapshot_every:
            self.snapshot()

    def snapshot(self) -> None:
        """Write the whole state and drop the operations it covers."""
        self.store.snapshot(self.stream, self.epoch, self.seq, json.dumps(self._dump(self.state), sort_keys=True))
        self._snapshot_seq = self.seq


def _apply_map(state: dict[str, Any], op: Op) -> None:
    if "set" in op:
        state[op["set"]] = op["value"]
    elif "delete" in op:
        state.pop(op["delete"], None)
    elif "clear" in op:
        state.clear()
    else:
        raise ValueError(f"not a map operation: {sorted(op)}")


class DurableMap:
    """A durable ``str -> JSON`` mapping: the shape most actor state takes (rules by id,
    bans by address, revoked token ids, queued webhooks...)."""

    def __init__(self, store: RecordStore, stream: str, *, snapshot_every: int = DEFAULT_SNAPSHOT_EVERY) -> None:
        self._durable: DurableState[dict[str, Any]] = DurableState(
            store, stream, initial=dict, apply=_apply_map, dump=dict, load=dict, snapshot_every=snapshot_every
        )

    def __getitem__(self, key: str) -> Any:
        return self._durable.state[key]

    def __contains__(self, key: object) -> bool:
        return key in self._durable.state

    def __len__(self) -> int:
        return len(self._durable.state)

    def get(self, key: str, default: Any = None) -> Any:
        return self._durable.state.get(key, default)

    def items(self) -> list[tuple[str, Any]]:
        return list(self._durable.state.items())

    def set(self, key: str, value: Any) -> None:
        self._durable.record({"set": key, "value": value})

    def set_many(self, values: dict[str, Any]) -> None:
        self._durable.record_many([{"set": key, "value": value} for key, value in values.items()])

    def delete(self, key: str) -> None:
        if key in self._durable.state:
            self._durable.record({"delete": key})

    def clear(self) -> None:
        self._durable.record({"clear": True})

    @property
    def epoch(self) -> int:
        return self._durable.epoch
