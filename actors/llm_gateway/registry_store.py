"""The registry's secrets and its old store: API keys encrypted at rest, and the one-time import.

The registry's entries live in its durable record (``rayfleet.durable``, see
``registry.py``); an entry's upstream API key is recorded only encrypted, with Fernet:
the key comes from the environment variable named by ``secret_env`` (a Fernet key, or any
passphrase, which is hashed into one), else from a key file created once with mode 0600
next to the database.

Before the record, the registry kept one row per entry in a table ``llm_registry`` of the
gateway's store. ``legacy_rows`` reads such a table (the rows keep their encrypted keys, so
the same registry key decrypts them) and ``retire_legacy`` renames it
``llm_registry_migrated`` once its rows are recorded, so the import happens once and the
old rows stay as a backup.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from actors.llm_gateway.durable_store import postgres_dsn
from rayfleet.logs import get_logger
from rayfleet.secrets import load_or_create_key
from rayfleet.sqlite import connect

log = get_logger("llm_gateway")

LEGACY_TABLE = "llm_registry"
RETIRED_TABLE = "llm_registry_migrated"
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
UNDECRYPTABLE = "stored API key cannot be decrypted with the current registry key"


def _fernet_key(secret: str) -> bytes:
    raw = secret.strip().encode()
    try:
        if len(base64.urlsafe_b64decode(raw)) == 32:
            return raw
    except (ValueError, TypeError):
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(raw).digest())


def load_cipher(secret_env: str, key_file: str | os.PathLike[str]) -> Fernet:
    """Fernet from ``$secret_env``, else from ``key_file`` (generated once, mode 0600)."""
    secret = os.environ.get(secret_env, "") if secret_env else ""
    if secret.strip():
        return Fernet(_fernet_key(secret))
    key, created = load_or_create_key(Path(key_file), Fernet.generate_key)
    if created:
        log.warning(
            f"${secret_env} is not set: registry API keys are encrypted with a generated key kept in "
            f"{key_file} (mode 0600); set ${secret_env} on every node of a multi-node cluster"
        )
    return Fernet(key)


def decrypt(cipher: Fernet, enc: str | None, entry_id: str) -> tuple[str | None, str | None]:
    """``(api_key, error)`` of a recorded entry: the key, or why it cannot be read."""
    if not enc:
        return None, None
    try:
        return cipher.decrypt(enc.encode()).decode(), None
    except InvalidToken:
        log.warning("registry entry has an API key that cannot be decrypted", extra={"id": entry_id})
        return None, UNDECRYPTABLE


def _connect(spec: dict[str, Any]) -> Any:
    """A connection to the gateway's store, or ``None`` when its SQLite file does not exist."""
    if spec.get("type") == "postgres":
        import psycopg

        return psycopg.connect(postgres_dsn(spec), autocommit=True, connect_timeout=3)
    path = Path(spec["sqlite_path"])
    return connect(path, autocommit=True, row_factory=False) if path.exists() else None


def _has_table(conn: Any, postgres: bool) -> bool:
    if postgres:
        return conn.execute("SELECT to_regclass(%s)", (LEGACY_TABLE,)).fetchone()[0] is not None
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (LEGACY_TABLE,)).fetchone()
    return found is not None


def legacy_rows(spec: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The entries of an old-format ``llm_registry`` table (as recorded: ``api_key_enc``), or ``None``."""
    conn = _connect(spec)
    if conn is None:
        return None
    try:
        if not _has_table(conn, spec.get("type") == "postgres"):
            return None
        rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM {LEGACY_TABLE} ORDER BY created_at, id").fetchall()
    finally:
        conn.close()
    entries = []
    for row in rows:
        rec = dict(zip(COLUMNS, row, strict=True))
        rec["models"] = json.loads(rec["models"] or "[]")
        rec["probed_models"] = json.loads(rec["probed_models"]) if rec["probed_models"] else None
        entries.append(rec)
    return entries


def retire_legacy(spec: dict[str, Any]) -> None:
    """Rename the imported table so it is never imported again (its rows stay as a backup)."""
    conn = _connect(spec)
    if conn is None:
        return
    try:
        conn.execute(f"ALTER TABLE {LEGACY_TABLE} RENAME TO {RETIRED_TABLE}")
    finally:
        conn.close()
