"""The audit trail (``logging.audit_trail``): an append-only, hash-chained record of every request.

Each ``/v1/*`` request appends one record: when, who (the key's fingerprint and the
client address), route, model, endpoint, status, tokens, cost and the security
decisions (injection score, links replaced, the error class of a refusal, cache
status). Prompt and answer text are never written. With ``mask_pii`` every string is
masked before it is written (emails, phone numbers, card numbers, API keys).

Records live in ``<data_dir>/audit.db`` (SQLite, WAL); each row holds the hash of its
predecessor and its own ``HMAC-SHA256(key, prev_hash + canonical JSON of the record)``,
chained in one write transaction, so several replicas of one node share one chain. The
key is ``$LLM_PROXY_AUDIT_KEY`` (``logging.audit_trail.secret_env``; ``make up`` writes it
into ``var/secrets.env``), else ``<data_dir>/audit.key`` generated once (mode 0600): someone
who can write the database but has not the key cannot edit a record and recompute the
chain. Rows written before the chain was keyed (``alg`` ``sha256``) verify as a prefix only;
a plain-hash row after a keyed one is a break.

The chain's head (last ``seq`` and hash) is exported every ``head_export_interval`` seconds:
a JSON line appended to ``<data_dir>/audit-heads.jsonl`` and a log line (ship either off
the node). ``verify`` also checks every exported head whose record has not been purged:
a cut-off tail, which the chain alone cannot show, is reported as ``head_missing_seq``. Nothing
updates or deletes a row except the GDPR purge (``gdpr.auto_purge``, daily), which
deletes records older than ``gdpr.retention_days``, keeps the hash of the last deleted
record as the chain's anchor and appends a ``checkpoint`` record saying what it purged,
so the remaining chain still verifies. ``verify`` walks the chain; so do
``GET /admin/audit/verify`` and ``python -m deployments.llm_gateway.audit verify <db>``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from deployments.llm_gateway.masking import bound_all, scrub
from deployments.llm_gateway.storage import SQLiteFile
from rayfleet.logs import get_logger
from rayfleet.secrets import load_or_create_key
from rayfleet.tasks import Wake

log = get_logger("llm_gateway")

GENESIS = "0" * 64
KEYED, LEGACY = "hmac-sha256", "sha256"
AUDIT_KEY_ENV = "LLM_PROXY_AUDIT_KEY"
_DDL = (
    "CREATE TABLE IF NOT EXISTS audit_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL,"
    " kind TEXT NOT NULL, record TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS audit_anchor (id INTEGER PRIMARY KEY CHECK (id = 1), through_seq INTEGER NOT NULL,"
    " hash TEXT NOT NULL)",
)


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def chain_hash(key: bytes, prev_hash: str, record_json: str, alg: str = KEYED) -> str:
    data = (prev_hash + record_json).encode()
    if alg == LEGACY:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def audit_key(env: str, key_file: Path) -> bytes:
    """The chain's HMAC key: ``$env`` (hashed), else ``key_file``, generated once with mode 0600."""
    secret = os.environ.get(env, "").strip() if env else ""
    if secret:
        return hashlib.sha256(secret.encode()).digest()
    key, created = load_or_create_key(key_file, lambda: secrets.token_hex(32).encode())
    if created:
        log.warning(
            f"${env} is not set: the audit chain is keyed with a generated key kept in {key_file} (mode 0600); "
            f"set ${env} (make up writes it into var/secrets.env)"
        )
    return hashlib.sha256(key).digest()


def _heads(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            head = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash
        if isinstance(head, dict) and isinstance(head.get("seq"), int) and isinstance(head.get("hash"), str):
            out.append(head)
    return out


class AuditLog(SQLiteFile):
    """The database side: append, verify, purge, export the head (blocking; callers run it in a thread)."""

    def __init__(self, path: Path, key: bytes) -> None:
        super().__init__(path, _DDL)
        if len(key) < 16:
            raise ValueError("the audit key must be at least 16 bytes")
        self._key = key
        db = self._conn()
        columns = {row[1] for row in db.execute("PRAGMA table_info(audit_log)")}
        if "alg" not in columns:  # a chain written before it was keyed: its rows stay plain SHA-256
            db.execute(f"ALTER TABLE audit_log ADD COLUMN alg TEXT NOT NULL DEFAULT '{LEGACY}'")
            db.commit()

    def _last_hash(self, db: sqlite3.Connection) -> str:
        row = db.execute("SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
        if row:
            return str(row[0])
        anchor = db.execute("SELECT hash FROM audit_anchor WHERE id = 1").fetchone()
        return str(anchor[0]) if anchor else GENESIS

    def append(self, records: list[tuple[float, str, dict[str, Any]]]) -> None:
        """Chain and write ``(ts, kind, record)`` entries in one transaction."""
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            prev = self._last_hash(db)
            rows = []
            for ts, kind, record in records:
                body = _canonical({"ts": ts, "kind": kind, **record})
                digest = chain_hash(self._key, prev, body)
                rows.append((ts, kind, body, prev, digest, KEYED))
                prev = digest
            db.executemany("INSERT INTO audit_log (ts, kind, record, prev_hash, hash, alg) VALUES (?,?,?,?,?,?)", rows)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def verify(self, heads: Path | None = None) -> dict[str, Any]:
        """Walk the chain (keyed rows after legacy ones only), then check the exported heads."""
        db = self._conn()
        anchor = db.execute("SELECT hash, through_seq FROM audit_anchor WHERE id = 1").fetchone()
        anchored = anchor[1] if anchor else 0
        prev = str(anchor[0]) if anchor else GENESIS
        count, legacy, keyed = 0, 0, False
        hashes: dict[int, str] = {}
        result: dict[str, Any] = {"ok": True, "first_bad_seq": None, "anchored_after": anchored}
        for seq, body, prev_hash, digest, alg in db.execute(
            "SELECT seq, record, prev_hash, hash, alg FROM audit_log ORDER BY seq"
        ):
            downgrade = alg != KEYED and keyed
            if downgrade or prev_hash != prev or chain_hash(self._key, prev_hash, body, alg) != digest:
                result.update(ok=False, first_bad_seq=seq)
                break
            keyed = keyed or alg == KEYED
            legacy += alg != KEYED
            hashes[seq] = digest
            prev = digest
            count += 1
        result.update(records=count, keyed=keyed, legacy_records=legacy, heads_checked=0, head_missing_seq=None)
        if not result["ok"]:
            return result
        last = max(hashes, default=anchored)
        for head in _heads(heads):
            if head["seq"] <= anchored:
                continue  # purged since it was exported
            result["heads_checked"] += 1
            if head["seq"] > last or hashes.get(head["seq"]) != head["hash"]:
                result.update(ok=False, head_missing_seq=head["seq"])
                break
        return result

    def head(self) -> dict[str, Any] | None:
        row = self._conn().execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
        return {"seq": int(row[0]), "hash": str(row[1])} if row else None

    def export_head(self, path: Path) -> dict[str, Any] | None:
        """Append the head as one JSON line (fsynced) and log it; ``None`` for an empty chain."""
        head = self.head()
        if head is None:
            return None
        head["ts"] = round(time.time(), 3)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (json.dumps(head, separators=(",", ":")) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        log.info("audit chain head", extra={"audit_seq": head["seq"], "audit_hash": head["hash"]})
        return head

    def purge(self, older_than: float) -> int:
        """Delete records older than ``older_than`` (epoch s); the chain is re-anchored and a checkpoint appended."""
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "SELECT seq, hash FROM audit_log WHERE ts < ? ORDER BY seq DESC LIMIT 1", (older_than,)
            ).fetchone()
            if row is None:
                db.execute("COMMIT")
                return 0
            through, anchor_hash = row
            removed = db.execute("DELETE FROM audit_log WHERE seq <= ?", (through,)).rowcount
            db.execute(
                "INSERT INTO audit_anchor (id, through_seq, hash) VALUES (1, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET through_seq = excluded.through_seq, hash = excluded.hash",
                (through, anchor_hash),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        now = time.time()
        self.append([(now, "checkpoint", {"purged_through_seq": through, "purged": removed, "anchor": anchor_hash})])
        return int(removed)

    def close(self) -> None:
        self._close()


class AuditTrail:
    """The replica side: records buffered per request, written in batches off the request path."""

    def __init__(self, path: Path, key: bytes, mask: bool, heads: Path, max_pending: int = 50_000) -> None:
        self.log = AuditLog(path, key)
        self.heads = heads
        self._exported: int | None = None
        self.mask = mask
        self.max_pending = max_pending
        self.pending: list[tuple[float, str, dict[str, Any]]] = []
        self.dropped = 0
        self.wake = Wake()  # set by ``add``: the queued records wait for ``flush``
        self._lock = asyncio.Lock()

    def add(self, ts: float, record: dict[str, Any], kind: str = "request") -> None:
        """Queue one record (``request``, or ``control`` for a control-plane change)."""
        if len(self.pending) >= self.max_pending:
            self.dropped += 1
            return
        self.pending.append((ts, kind, record))
        self.wake.set()

    def _write(self, batch: list[tuple[float, str, dict[str, Any]]]) -> None:
        """In the writer's thread: every string bounded (and masked with ``mask``), then appended."""
        prepare = scrub if self.mask else bound_all
        self.log.append([(ts, kind, prepare(record)) for ts, kind, record in batch])

    async def flush(self) -> None:
        async with self._lock:
            batch, self.pending = self.pending, []
            if batch:
                await asyncio.to_thread(self._write, batch)

    async def verify(self) -> dict[str, Any]:
        await self.flush()
        async with self._lock:
            return await asyncio.to_thread(self.log.verify, self.heads)

    async def export_head(self) -> None:
        """Export the head when it moved since this replica last exported it."""
        async with self._lock:
            head = await asyncio.to_thread(self.log.head)
            if head is not None and head["seq"] != self._exported:
                await asyncio.to_thread(self.log.export_head, self.heads)
                self._exported = head["seq"]

    async def purge(self, retention_days: int) -> int:
        await self.flush()
        async with self._lock:
            return await asyncio.to_thread(self.log.purge, time.time() - retention_days * 86400)

    async def close(self) -> None:
        await self.flush()
        self.log.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deployments.llm_gateway.audit")
    parser.add_argument("command", choices=["verify"])
    parser.add_argument("db", type=Path, help="the audit database, e.g. var/llm_gateway/audit.db")
    parser.add_argument("--key-env", default=AUDIT_KEY_ENV, help="the variable holding the chain's key")
    parser.add_argument("--key-file", type=Path, help="the generated key (default: audit.key beside the database)")
    parser.add_argument("--heads", type=Path, help="exported heads (default: audit-heads.jsonl beside the database)")
    args = parser.parse_args(argv)
    if not args.db.exists():
        print(f"no audit database at {args.db}", file=sys.stderr)
        return 2
    key_file = args.key_file or args.db.with_name("audit.key")
    if not os.environ.get(args.key_env, "").strip() and not key_file.exists():
        print(f"no audit key: set ${args.key_env} or pass --key-file", file=sys.stderr)
        return 2
    key = audit_key(args.key_env, key_file)
    result = AuditLog(args.db, key).verify(args.heads or args.db.with_name("audit-heads.jsonl"))
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
