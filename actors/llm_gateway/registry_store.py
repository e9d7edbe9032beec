"""Durable rows of the endpoint registry: SQLite or Postgres, API keys encrypted at rest.

The registry actor is the only writer. Each mutation is one upsert or delete of one row,
so a failed write leaves the stored registry as it was. API keys are encrypted with
Fernet: the key comes from the environment variable named by ``secret_env`` (a Fernet
key, or any passphrase, which is hashed into one), else from a key file created once
with mode 0600 next to the database.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from rayfleet.logs import get_logger
from rayfleet.secrets import load_or_create_key
from rayfleet.sqlite import connect

log = get_logger("llm_gateway")

COLUMNS = (
    "id",
    "name",
    "base_url",
    "provider",
    "priority",
    "api_key_enc",
    "models",
    "probed_models",
    "status",
    "latency_ms",
    "last_probe_at",
    "last_error",
    "created_at",
    "updated_at",
)

_DDL = (
    "CREATE TABLE IF NOT EXISTS llm_registry (id TEXT PRIMARY KEY, name TEXT NOT NULL, base_url TEXT NOT NULL,"
    " provider TEXT NOT NULL, priority INTEGER NOT NULL, api_key_enc TEXT, models TEXT NOT NULL,"
    " probed_models TEXT, status TEXT NOT NULL, latency_ms DOUBLE PRECISION, last_probe_at DOUBLE PRECISION,"
    " last_error TEXT, created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)"
)


def _fernet_key(secret: str) -> bytes:
    raw = secret.strip().encode()
    try:
        if len(base64.urlsafe_b64decode(raw)) == 32:
            return raw
    except (ValueError, TypeError):
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(raw).digest())


def load_cipher(secret_env: str, key_file: Path) -> Fernet:
    """Fernet from ``$secret_env``, else from ``key_file`` (generated once, mode 0600)."""
    secret = os.environ.get(secret_env, "") if secret_env else ""
    if secret.strip():
        return Fernet(_fernet_key(secret))
    key, created = load_or_create_key(key_file, Fernet.generate_key)
    if created:
        log.warning(
            f"${secret_env} is not set: registry API keys are encrypted with a generated key kept in "
            f"{key_file} (mode 0600); set ${secret_env} on every node of a multi-node cluster"
        )
    return Fernet(key)


class RegistryStore:
    """One table, ``llm_registry``, in the gateway's configured store."""

    def __init__(self, kind: str, cipher: Fernet, sqlite_path: Path | None = None, dsn: str = "") -> None:
        self.kind = kind
        self.cipher = cipher
        self.sqlite_path = sqlite_path
        self.dsn = dsn
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is not None and not getattr(self._conn, "closed", False):
            return self._conn
        if self.kind == "postgres":
            import psycopg

            conn: Any = psycopg.connect(self.dsn, autocommit=True, connect_timeout=3)
            conn.execute(_DDL)
        else:
            assert self.sqlite_path is not None
            conn = connect(self.sqlite_path, autocommit=True, row_factory=False)
            conn.execute(_DDL)
        self._conn = conn
        return conn

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self.kind != "postgres":
            sql = sql.replace("%s", "?")
        try:
            conn = self._connection()
            cur = conn.execute(sql, params)
            return list(cur.fetchall()) if cur.description else []
        except Exception:
            self.close()
            raise

    def load(self) -> list[dict[str, Any]]:
        rows = self._execute(f"SELECT {', '.join(COLUMNS)} FROM llm_registry ORDER BY created_at, id")
        entries = []
        for row in rows:
            rec = dict(zip(COLUMNS, row, strict=False))
            enc = rec["api_key_enc"]
            rec["api_key"] = None
            rec["api_key_error"] = None
            if enc:
                try:
                    rec["api_key"] = self.cipher.decrypt(enc.encode()).decode()
                except InvalidToken:
                    rec["api_key_error"] = "stored API key cannot be decrypted with the current registry key"
                    log.warning("registry entry has an API key that cannot be decrypted", extra={"id": rec["id"]})
            rec["models"] = json.loads(rec["models"] or "[]")
            rec["probed_models"] = json.loads(rec["probed_models"]) if rec["probed_models"] else None
            entries.append(rec)
        return entries

    def upsert(self, entry: dict[str, Any], api_key_enc: str | None) -> None:
        values = dict(entry)
        values["api_key_enc"] = api_key_enc
        values["models"] = json.dumps(entry["models"])
        values["probed_models"] = json.dumps(entry["probed_models"]) if entry["probed_models"] is not None else None
        params = tuple(values[c] for c in COLUMNS)
        updates = ", ".join(f"{c}=excluded.{c}" for c in COLUMNS if c != "id")
        self._execute(
            f"INSERT INTO llm_registry ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))})"
            f" ON CONFLICT (id) DO UPDATE SET {updates}",
            params,
        )

    def delete(self, entry_id: str) -> None:
        self._execute("DELETE FROM llm_registry WHERE id=%s", (entry_id,))

    def encrypt(self, api_key: str | None) -> str | None:
        return self.cipher.encrypt(api_key.encode()).decode() if api_key else None

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None


def open_store(spec: dict[str, Any]) -> RegistryStore:
    """``spec``: ``type`` (sqlite|postgres), ``sqlite_path``, ``dsn_env``, ``dsn``, ``secret_env``, ``key_file``.

    The DSN is resolved here, inside the actor's process, so it never travels as an actor argument.
    """
    cipher = load_cipher(spec.get("secret_env", ""), Path(spec["key_file"]))
    if spec.get("type") == "postgres":
        dsn = os.environ.get(spec.get("dsn_env") or "", "") or spec.get("dsn", "")
        if not dsn:
            raise ValueError(f"storage.type is postgres but neither ${spec.get('dsn_env')} nor storage.dsn is set")
        return RegistryStore("postgres", cipher, dsn=dsn)
    return RegistryStore("sqlite", cipher, sqlite_path=Path(spec["sqlite_path"]))
