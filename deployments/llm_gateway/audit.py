"""The audit trail (``logging.audit_trail``): an append-only, hash-chained record of every request.

Each ``/v1/*`` request appends one record: when, who (the key's fingerprint and the
client address), route, model, endpoint, status, tokens, cost and the security
decisions (injection score, links replaced, the error class of a refusal, cache
status). Prompt and answer text are never written. With ``mask_pii`` every string is
masked before it is written (emails, phone numbers, card numbers, API keys).

Records live in ``<data_dir>/audit.db`` (SQLite, WAL); each row holds the hash of its
predecessor and its own ``sha256(prev_hash + canonical JSON of the record)``, chained
in one write transaction, so several replicas of one node share one chain. Nothing
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
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from deployments.llm_gateway.masking import bound_all, scrub
from deployments.llm_gateway.storage import SQLiteFile

GENESIS = "0" * 64
_DDL = (
    "CREATE TABLE IF NOT EXISTS audit_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL,"
    " kind TEXT NOT NULL, record TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS audit_anchor (id INTEGER PRIMARY KEY CHECK (id = 1), through_seq INTEGER NOT NULL,"
    " hash TEXT NOT NULL)",
)


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def chain_hash(prev_hash: str, record_json: str) -> str:
    return hashlib.sha256((prev_hash + record_json).encode()).hexdigest()


class AuditLog(SQLiteFile):
    """The database side: append, verify, purge (blocking; callers run it in a thread)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, _DDL)

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
                digest = chain_hash(prev, body)
                rows.append((ts, kind, body, prev, digest))
                prev = digest
            db.executemany("INSERT INTO audit_log (ts, kind, record, prev_hash, hash) VALUES (?,?,?,?,?)", rows)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def verify(self) -> dict[str, Any]:
        db = self._conn()
        anchor = db.execute("SELECT hash, through_seq FROM audit_anchor WHERE id = 1").fetchone()
        prev = str(anchor[0]) if anchor else GENESIS
        count = 0
        for seq, body, prev_hash, digest in db.execute(
            "SELECT seq, record, prev_hash, hash FROM audit_log ORDER BY seq"
        ):
            if prev_hash != prev or chain_hash(prev_hash, body) != digest:
                return {
                    "ok": False,
                    "records": count,
                    "first_bad_seq": seq,
                    "anchored_after": anchor[1] if anchor else 0,
                }
            prev = digest
            count += 1
        return {"ok": True, "records": count, "first_bad_seq": None, "anchored_after": anchor[1] if anchor else 0}

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

    def __init__(self, path: Path, mask: bool, max_pending: int = 50_000) -> None:
        self.log = AuditLog(path)
        self.mask = mask
        self.max_pending = max_pending
        self.pending: list[tuple[float, str, dict[str, Any]]] = []
        self.dropped = 0
        self._lock = asyncio.Lock()

    def add(self, ts: float, record: dict[str, Any], kind: str = "request") -> None:
        """Queue one record (``request``, or ``control`` for a control-plane change)."""
        if len(self.pending) >= self.max_pending:
            self.dropped += 1
            return
        self.pending.append((ts, kind, record))

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
            return await asyncio.to_thread(self.log.verify)

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
    args = parser.parse_args(argv)
    if not args.db.exists():
        print(f"no audit database at {args.db}", file=sys.stderr)
        return 2
    result = AuditLog(args.db).verify()
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
