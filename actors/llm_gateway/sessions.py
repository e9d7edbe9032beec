"""Revoked control-plane sessions, shared by every replica (``POST /auth/logout``).

Session tokens are stateless (signed and expiring, ``deployments.llm_gateway.sessions``), so
logging out has to be remembered somewhere every replica asks: this actor keeps each revoked
session id until the session would have expired anyway, so it never grows past the sessions
revoked within one ``identity.session_ttl``. Replicas ask it on every request that presents a
session (control-plane traffic only, never inference), so a logout holds at once everywhere.

Durable (``rayfleet.durable``, stream ``llm_gateway/sessions``): a revocation is recorded
before ``revoke`` answers, so a restarted actor still refuses every session signed out before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from actors.llm_gateway.durable_store import record_store
from rayfleet.durable import DurableMap

STREAM = "llm_gateway/sessions"


class SessionBoard:
    """The actor. ``store``: the gateway's storage spec (``durable_store``); ``None``: the platform's store."""

    def __init__(
        self, clock: Callable[[], float] = time.time, store: dict[str, Any] | None = None, stream: str = STREAM
    ) -> None:
        self._clock = clock
        self._store_spec, self._stream = store, stream
        self._map: DurableMap | None = None

    def _revoked(self) -> DurableMap:
        if self._map is None:
            self._map = DurableMap(record_store(self._store_spec), self._stream)
        return self._map

    def _prune(self) -> None:
        now, revoked = self._clock(), self._revoked()
        for sid in [s for s, exp in revoked.items() if exp <= now]:
            revoked.delete(sid)

    def revoke(self, sid: str, expires_at: float) -> bool:
        """Remember `sid` as revoked until `expires_at`; False if it was already revoked."""
        self._prune()
        if sid in self._revoked():
            return False
        self._revoked().set(sid, float(expires_at))
        return True

    def is_revoked(self, sid: str) -> bool:
        exp = self._revoked().get(sid)
        return exp is not None and exp > self._clock()

    def count(self) -> int:
        self._prune()
        return len(self._revoked())
