"""Virtual keys (``/api/v1/keys``): inference keys made and revoked at run time, one named actor.

The actor keeps each key's record under its id: ``name``, the SHA-256 of the key (never the
key: the replica that creates a key shows it once and sends only its hash), a display
``prefix``, the ``models`` it may use (empty: every model), ``expires_at``, ``team``,
``metadata``, ``created_at`` and ``revoked_at``. Records are durable (``rayfleet.durable``,
stream ``llm_gateway/keys``): a change is recorded before it is answered and replayed after
a restart. Revoked keys stay listed (with ``revoked_at``), so an audit can tell a revoked
key from one that never existed.

Replicas long-poll ``wait_snapshot(version)`` (``snapshot`` held while nothing changed:
``actors/llm_gateway/changes.py``) and authenticate against their local copy, never calling the
actor per request. Versions start
at the record's epoch shifted 32 bits, above every version of an earlier instance.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from actors.llm_gateway.changes import HOLD_SECONDS, Changes
from actors.llm_gateway.durable_store import record_store
from rayfleet.durable import DurableState, Op
from rayfleet.state import unlocked

STREAM = "llm_gateway/keys"


def _apply(state: dict[str, dict[str, Any]], op: Op) -> None:
    if op["op"] == "put":
        state[op["key"]["id"]] = op["key"]
    else:
        raise ValueError(f"not a key operation: {op['op']!r}")


class KeyBoard:
    """The actor. ``store``: the gateway's storage spec (``durable_store``); ``None``: the platform's store."""

    def __init__(
        self, store: dict[str, Any] | None = None, clock: Callable[[], float] = time.time, stream: str = STREAM
    ) -> None:
        self._store_spec, self._clock, self._stream = store, clock, stream
        self._durable: DurableState[dict[str, dict[str, Any]]] | None = None
        self._version = 0
        self._changes = Changes()

    def _record(self) -> DurableState[dict[str, dict[str, Any]]]:
        if self._durable is None:
            durable = DurableState(
                record_store(self._store_spec), self._stream, initial=dict, apply=_apply, dump=dict, load=dict
            )
            self._durable, self._version = durable, durable.epoch << 32
        return self._durable

    def _put(self, key: dict[str, Any]) -> dict[str, Any]:
        self._record().record({"op": "put", "key": key})
        self._version += 1
        self._changes.notify()
        return {"ok": True, "key": dict(key), "version": self._version}

    def create(self, key: dict[str, Any]) -> dict[str, Any]:
        """``key``: the validated record with ``id`` and ``hash`` (the caller made the secret)."""
        keys = self._record().state
        if key["id"] in keys or any(k["hash"] == key["hash"] for k in keys.values()):
            return {"ok": False, "error": "conflict", "message": "a key with this id or secret exists"}
        return self._put({**key, "created_at": self._clock(), "revoked_at": None})

    def update(self, key_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change ``fields`` (validated by the caller: name, models, expires_at, team, metadata, or a
        new ``hash``/``prefix`` when the key is rotated) of a key that is not revoked."""
        keys = self._record().state
        key = keys.get(key_id)
        if key is None or key["revoked_at"] is not None:
            return {"ok": False, "error": "not_found", "message": f"unknown or revoked key {key_id!r}"}
        if "hash" in fields and any(k["hash"] == fields["hash"] for k in keys.values()):
            return {"ok": False, "error": "conflict", "message": "a key with this secret exists"}
        return self._put({**key, **fields})

    def revoke(self, key_id: str) -> dict[str, Any]:
        key = self._record().state.get(key_id)
        if key is None:
            return {"ok": False, "error": "not_found", "message": f"unknown key {key_id!r}"}
        if key["revoked_at"] is not None:
            return {"ok": True, "key": dict(key), "version": self._version}
        return self._put({**key, "revoked_at": self._clock()})

    def snapshot(self, since_version: int = -1) -> dict[str, Any] | None:
        """Every key record (hashes included, for authentication) with the version; ``None`` if unchanged."""
        keys = self._record().state
        if since_version == self._version:
            return None
        return {"version": self._version, "keys": [dict(k) for k in keys.values()]}

    @unlocked
    async def wait_snapshot(self, since_version: int = -1, timeout: float = HOLD_SECONDS) -> dict[str, Any] | None:
        """``snapshot(since_version)``, the call held up to ``timeout`` s while nothing changed (a long-poll)."""
        self._record()
        await self._changes.wait(lambda: self._version == since_version, timeout)
        return self.snapshot(since_version)
