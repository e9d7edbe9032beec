"""Where the gateway's durable actors (registry, webhook queue) keep their write-ahead record.

One way to persist: ``rayfleet.durable``. The store is the platform's
``RAYFLEET_DURABLE_DSN`` when it is set (the operator chose one store for the whole
fleet); otherwise it follows the gateway's ``server.storage``: PostgreSQL at its DSN, or
SQLite in ``<storage.path stem>.durable.sqlite3`` next to the gateway's database (a file
of its own, so the request-record writer never holds the lock an acknowledgement waits
for). The DSN is resolved here, inside the actor's process, so it never travels as an
actor argument.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rayfleet.durable import DSN_ENV, PostgresStore, RecordStore, SqliteStore, open_store


def postgres_dsn(spec: dict[str, Any]) -> str:
    """The DSN of a ``type: postgres`` store spec (``$dsn_env`` first, then ``dsn``)."""
    dsn = os.environ.get(spec.get("dsn_env") or "", "") or spec.get("dsn") or ""
    if not dsn:
        raise ValueError(f"storage.type is postgres but neither ${spec.get('dsn_env')} nor storage.dsn is set")
    return str(dsn)


def durable_path(sqlite_path: str | os.PathLike[str]) -> Path:
    """The SQLite file of the durable record that sits next to the gateway database ``sqlite_path``."""
    path = Path(sqlite_path)
    return path.with_name(f"{path.stem}.durable.sqlite3")


def open_gateway_store(spec: dict[str, Any]) -> RecordStore:
    """``spec``: ``type`` (sqlite|postgres), ``sqlite_path``, ``dsn_env``, ``dsn`` (the gateway's storage)."""
    if os.environ.get(DSN_ENV):
        return open_store()
    if spec.get("type") == "postgres":
        return PostgresStore(postgres_dsn(spec))
    return SqliteStore(durable_path(spec["sqlite_path"]))


def record_store(spec: dict[str, Any] | None) -> RecordStore:
    """The store of an actor given the gateway's storage ``spec``; ``None``: the platform's default store."""
    return open_gateway_store(spec) if spec is not None else open_store()
