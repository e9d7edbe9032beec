"""The endpoint registry actor (spec 001 §A.1 and §3 "Registry status").

One named actor holds every registry entry, serialises all changes (so a duplicate name
is refused atomically) and records each change durably (``rayfleet.durable``, stream
``llm_gateway/registry``, in the store ``durable_store.open_gateway_store`` picks) before
it is visible; upstream API keys are recorded encrypted (``registry_store``). Replicas
long-poll ``wait_snapshot(version)`` (``snapshot``, which returns ``None`` while nothing changed,
held until something does: ``changes.py``) and route to the entries whose status is ``verified``; they never call the actor per inference request.
After a restart the actor replays the record. Versions only grow within a process and
start above every version of an earlier instance (they begin at the record's epoch
shifted left by 32 bits), so a replica never mistakes a restarted actor's state for the
one it holds. A store of the old format (table ``llm_registry``) is imported once into a
record that has never been written, then renamed ``llm_registry_migrated``.

Statuses: ``verified`` (shown as Live, routable), ``FOUND`` (added by an operator, not
verified yet), ``DISCOVERED`` (found by a scan), ``IGNORED`` (switched off). Toggle:
``verified`` -> ``IGNORED``, any other -> ``verified``. A successful probe promotes
``FOUND``/``DISCOVERED`` to ``verified``; it never overrides ``IGNORED``. A failed probe
leaves the status unchanged.

Methods return ``{"ok": True, ...}`` or ``{"ok": False, "error": <code>, "message": ...}``
with codes ``not_found``, ``conflict`` and ``store_unavailable``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cryptography.fernet import Fernet

from actors.llm_gateway.changes import HOLD_SECONDS, Changes
from actors.llm_gateway.durable_store import open_gateway_store
from actors.llm_gateway.registry_store import decrypt, legacy_rows, load_cipher, retire_legacy
from rayfleet.durable import DurableState, Op
from rayfleet.logs import get_logger, register_secret
from rayfleet.state import unlocked

log = get_logger("llm_gateway")

VERIFIED, FOUND, IGNORED, DISCOVERED = "verified", "FOUND", "IGNORED", "DISCOVERED"
STATUSES = (VERIFIED, FOUND, IGNORED, DISCOVERED)
PROMOTED_BY_PROBE = frozenset({FOUND, DISCOVERED})
RETRY_AFTER_FAILURE = 2.0  # seconds before an unavailable store is tried again
STREAM = "llm_gateway/registry"


def toggled(status: str) -> str:
    """§3: ``verified`` -> ``IGNORED``; any other status -> ``verified``."""
    return IGNORED if status == VERIFIED else VERIFIED


def _fail(error: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": error, "message": message}


def _apply(state: dict[str, dict[str, Any]], op: Op) -> None:
    """One recorded change: entries as stored (``api_key_enc``, never the key itself)."""
    kind = op["op"]
    if kind == "put":
        state[op["entry"]["id"]] = op["entry"]
    elif kind == "remove":
        state.pop(op["id"], None)
    elif kind == "import":
        for entry in op["entries"]:
            state[entry["id"]] = entry
    else:
        raise ValueError(f"not a registry operation: {kind!r}")


class RegistryBoard:
    """The actor. ``store`` describes the gateway's store and its key (``state.registry_store``)."""

    def __init__(self, store: dict[str, Any], clock: Callable[[], float] = time.time, stream: str = STREAM) -> None:
        self._spec = store
        self._clock = clock
        self._stream = stream
        self._durable: DurableState[dict[str, dict[str, Any]]] | None = None
        self._cipher: Fernet | None = None
        self._entries: dict[str, dict[str, Any]] = {}
        self._version = 0
        self._failed_at: float | None = None
        self._changes = Changes()

    def configure(self, store: dict[str, Any]) -> None:
        """Apply the store of the current config (the actor outlives redeploys); reloads if it changed."""
        if store != self._spec:
            self._close()
            self._spec, self._failed_at = store, None

    # -- persistence -----------------------------------------------------------
    def _close(self) -> None:
        if self._durable is not None:
            self._durable.store.close()
        self._durable, self._cipher = None, None

    def _ensure(self) -> DurableState[dict[str, dict[str, Any]]]:
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER_FAILURE:
            raise ConnectionError("registry store unavailable (retrying shortly)")
        try:
            return self._load()
        except Exception:
            self._close()
            self._failed_at = time.monotonic()
            raise

    def _load(self) -> DurableState[dict[str, dict[str, Any]]]:
        if self._durable is None:
            self._cipher = load_cipher(self._spec.get("secret_env", ""), self._spec["key_file"])
            durable = DurableState(
                open_gateway_store(self._spec), self._stream, initial=dict, apply=_apply, dump=dict, load=dict
            )
            if durable.seq == 0:
                self._migrate(durable)
            self._entries = {}
            for stored in sorted(durable.state.values(), key=lambda e: (e["created_at"], e["id"])):
                self._remember(stored)
            self._durable = durable
            self._version = max(self._version + 1, durable.epoch << 32)
            self._changes.notify()
        self._failed_at = None
        return self._durable

    def _migrate(self, durable: DurableState[dict[str, dict[str, Any]]]) -> None:
        """Import the rows of an old-format store into a record that was never written."""
        rows = legacy_rows(self._spec)
        if rows:
            durable.record({"op": "import", "entries": rows})
            log.info("registry imported from the old store", extra={"entries": len(rows)})
        if rows is not None:
            retire_legacy(self._spec)

    def _remember(self, stored: dict[str, Any]) -> None:
        """The in-memory entry of a stored one: the API key decrypted for routing."""
        assert self._cipher is not None
        entry = {k: v for k, v in stored.items() if k != "api_key_enc"}
        entry["api_key"], entry["api_key_error"] = decrypt(self._cipher, stored.get("api_key_enc"), stored["id"])
        register_secret(entry["api_key"])
        self._entries[entry["id"]] = entry

    def _guard(self, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            self._ensure()
            return fn()
        except Exception as exc:
            log.warning("registry store unavailable", extra={"error": type(exc).__name__})
            self._close()
            self._failed_at = time.monotonic()
            return _fail("store_unavailable", f"the registry store is unavailable ({type(exc).__name__})")

    def _encrypted(self, entry_id: str) -> str | None:
        assert self._durable is not None
        stored = self._durable.state.get(entry_id)
        return stored.get("api_key_enc") if stored else None

    def _commit(self, entry: dict[str, Any], enc: str | None) -> dict[str, Any]:
        assert self._durable is not None
        entry["updated_at"] = self._clock()
        stored = {k: v for k, v in entry.items() if k not in ("api_key", "api_key_error")}
        self._durable.record({"op": "put", "entry": {**stored, "api_key_enc": enc}})
        self._entries[entry["id"]] = entry
        self._version += 1
        self._changes.notify()
        return {"ok": True, "entry": dict(entry), "version": self._version}

    # -- reads -------------------------------------------------------------------
    def snapshot(self, since_version: int = -1) -> dict[str, Any] | None:
        """Every entry (API keys included, for routing) with the version; ``None`` if unchanged."""
        self._ensure()
        if since_version == self._version:
            return None
        return {"version": self._version, "entries": [dict(e) for e in self._entries.values()]}

    @unlocked
    async def wait_snapshot(self, since_version: int = -1, timeout: float = HOLD_SECONDS) -> dict[str, Any] | None:
        """``snapshot(since_version)``, the call held up to ``timeout`` s while nothing changed (a long-poll)."""
        self._ensure()
        await self._changes.wait(lambda: self._version == since_version, timeout)
        return self.snapshot(since_version)

    def get(self, entry_id: str) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            entry = self._entries.get(entry_id)
            if entry is None:
                return _fail("not_found", f"unknown registry entry {entry_id!r}")
            return {"ok": True, "entry": dict(entry), "version": self._version}

        return self._guard(run)

    # -- writes ------------------------------------------------------------------
    def add(self, fields: dict[str, Any], reserved: list[str] | None = None, status: str = FOUND) -> dict[str, Any]:
        """Add an entry; ``fields`` are validated by the caller (id, name, base_url, provider, ...)."""

        def run() -> dict[str, Any]:
            entry_id, name = fields["id"], fields["name"]
            taken = {e["name"].lower() for e in self._entries.values()}
            if entry_id in self._entries or name.lower() in taken or entry_id in (reserved or []):
                return _fail("conflict", f"an endpoint named {name!r} already exists")
            now = self._clock()
            entry = {
                "id": entry_id,
                "name": name,
                "base_url": fields["base_url"],
                "provider": fields["provider"],
                "priority": int(fields.get("priority", 0)),
                "models": list(fields.get("models") or []),
                "probed_models": None,
                "status": status,
                "latency_ms": None,
                "last_probe_at": None,
                "last_error": None,
                "created_at": now,
                "updated_at": now,
                "api_key": fields.get("api_key") or None,
                "api_key_error": None,
            }
            register_secret(entry["api_key"])
            assert self._cipher is not None
            enc = self._cipher.encrypt(entry["api_key"].encode()).decode() if entry["api_key"] else None
            return self._commit(entry, enc)

        return self._guard(run)

    def add_discovered(self, found: list[dict[str, Any]], reserved: list[str] | None = None) -> dict[str, Any]:
        """Scan results: new base URLs become DISCOVERED entries; known ones are reported, not duplicated."""

        def run() -> dict[str, Any]:
            out = []
            for server in found:
                existing = next((e for e in self._entries.values() if e["base_url"] == server["base_url"]), None)
                if existing is not None:
                    out.append({**_brief(existing), "added": False})
                    continue
                base = server["id"]
                entry_id, n = base, 2
                taken = set(self._entries) | set(reserved or []) | {e["name"].lower() for e in self._entries.values()}
                while entry_id in taken:
                    entry_id, n = f"{base}-{n}", n + 1
                result = self.add(
                    {**server, "id": entry_id, "name": entry_id, "priority": 0}, reserved, status=DISCOVERED
                )
                if not result["ok"]:
                    return result
                out.append({**_brief(result["entry"]), "added": True})
            return {"ok": True, "candidates": out, "version": self._version}

        return self._guard(run)

    def _update(self, entry_id: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            current = self._entries.get(entry_id)
            if current is None:
                return _fail("not_found", f"unknown registry entry {entry_id!r}")
            entry = dict(current)
            change(entry)
            return self._commit(entry, self._encrypted(entry_id))

        return self._guard(run)

    def toggle(self, entry_id: str) -> dict[str, Any]:
        return self._update(entry_id, lambda e: e.__setitem__("status", toggled(e["status"])))

    def set_priority(self, entry_id: str, priority: int) -> dict[str, Any]:
        return self._update(entry_id, lambda e: e.__setitem__("priority", int(priority)))

    def record_probe(
        self, entry_id: str, ok: bool, latency_ms: float | None, models: list[str] | None, error: str | None
    ) -> dict[str, Any]:
        def change(e: dict[str, Any]) -> None:
            e["last_probe_at"] = self._clock()
            if ok:
                e["latency_ms"] = latency_ms
                e["probed_models"] = list(models or [])
                e["last_error"] = None
                if e["status"] in PROMOTED_BY_PROBE:
                    e["status"] = VERIFIED
            else:
                e["last_error"] = error

        return self._update(entry_id, change)

    def remove(self, entry_id: str) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            if entry_id not in self._entries:
                return _fail("not_found", f"unknown registry entry {entry_id!r}")
            assert self._durable is not None
            self._durable.record({"op": "remove", "id": entry_id})
            entry = self._entries.pop(entry_id)
            self._version += 1
            self._changes.notify()
            return {"ok": True, "entry": entry, "version": self._version}

        return self._guard(run)


def _brief(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": entry["id"],
        "provider": entry["provider"],
        "base_url": entry["base_url"],
        "models": entry["models"],
        "status": entry["status"],
    }
