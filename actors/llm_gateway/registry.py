"""The endpoint registry actor (spec 001 §A.1 and §3 "Registry status").

One named actor holds every registry entry, serialises all changes (so a duplicate name
is refused atomically) and writes each change through to the gateway's store before it
is visible. Replicas poll ``snapshot(version)``, which returns ``None`` while nothing
changed, and route to the entries whose status is ``verified``; they never call the
actor per inference request. After a restart the actor reloads the store.

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

from actors.llm_gateway.registry_store import RegistryStore, open_store
from rayfleet.logs import get_logger, register_secret

log = get_logger("llm_gateway")

VERIFIED, FOUND, IGNORED, DISCOVERED = "verified", "FOUND", "IGNORED", "DISCOVERED"
STATUSES = (VERIFIED, FOUND, IGNORED, DISCOVERED)
PROMOTED_BY_PROBE = frozenset({FOUND, DISCOVERED})
RETRY_AFTER_FAILURE = 2.0  # seconds before an unavailable store is tried again


def toggled(status: str) -> str:
    """§3: ``verified`` -> ``IGNORED``; any other status -> ``verified``."""
    return IGNORED if status == VERIFIED else VERIFIED


def _fail(error: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": error, "message": message}


class RegistryBoard:
    """The actor. ``store`` describes the gateway's store (see ``registry_store.open_store``); all I/O is there."""

    def __init__(self, store: dict[str, Any], clock: Callable[[], float] = time.time) -> None:
        self._spec = store
        self._clock = clock
        self._store: RegistryStore | None = None
        self._entries: dict[str, dict[str, Any]] = {}
        self._enc: dict[str, str | None] = {}
        self._version = 0
        self._loaded = False
        self._failed_at: float | None = None

    def configure(self, store: dict[str, Any]) -> None:
        """Apply the store of the current config (the actor outlives redeploys); reloads if it changed."""
        if store != self._spec:
            if self._store is not None:
                self._store.close()
            self._spec, self._store, self._loaded, self._failed_at = store, None, False, None

    # -- persistence -----------------------------------------------------------
    def _ensure(self) -> RegistryStore:
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER_FAILURE:
            raise ConnectionError("registry store unavailable (retrying shortly)")
        try:
            return self._load()
        except Exception:
            self._failed_at = time.monotonic()
            raise

    def _load(self) -> RegistryStore:
        if self._store is None:
            self._store = open_store(self._spec)
        if not self._loaded:
            rows = self._store.load()
            self._entries, self._enc = {}, {}
            for row in rows:
                self._enc[row["id"]] = row.pop("api_key_enc")
                register_secret(row.get("api_key"))
                self._entries[row["id"]] = row
            self._loaded = True
            self._version += 1
        self._failed_at = None
        return self._store

    def _write(self, entry: dict[str, Any], enc: str | None) -> None:
        assert self._store is not None
        public = {k: v for k, v in entry.items() if k not in ("api_key", "api_key_error")}
        self._store.upsert(public, enc)

    def _guard(self, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            self._ensure()
            return fn()
        except Exception as exc:
            log.warning("registry store unavailable", extra={"error": type(exc).__name__})
            self._loaded = False
            self._failed_at = time.monotonic()
            return _fail("store_unavailable", f"the registry store is unavailable ({type(exc).__name__})")

    def _commit(self, entry: dict[str, Any], enc: str | None) -> dict[str, Any]:
        entry["updated_at"] = self._clock()
        self._write(entry, enc)
        self._entries[entry["id"]] = entry
        self._enc[entry["id"]] = enc
        self._version += 1
        return {"ok": True, "entry": dict(entry), "version": self._version}

    # -- reads -------------------------------------------------------------------
    def snapshot(self, since_version: int = -1) -> dict[str, Any] | None:
        """Every entry (API keys included, for routing) with the version; ``None`` if unchanged."""
        self._ensure()
        if since_version == self._version:
            return None
        return {"version": self._version, "entries": [dict(e) for e in self._entries.values()]}

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
            assert self._store is not None
            return self._commit(entry, self._store.encrypt(entry["api_key"]))

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
            return self._commit(entry, self._enc.get(entry_id))

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
            assert self._store is not None
            self._store.delete(entry_id)
            entry = self._entries.pop(entry_id)
            self._enc.pop(entry_id, None)
            self._version += 1
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
