"""Revoked control-plane sessions, shared by every replica (``POST /auth/logout``).

Session tokens are stateless (signed and expiring, ``deployments.llm_gateway.sessions``), so
logging out has to be remembered somewhere every replica asks: this actor keeps each revoked
session id until the session would have expired anyway, so it never grows past the sessions
revoked within one ``identity.session_ttl``. Replicas ask it on every request that presents a
session (control-plane traffic only, never inference), so a logout holds at once everywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class SessionBoard:
    """The actor."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._revoked: dict[str, float] = {}

    def _prune(self) -> None:
        now = self._clock()
        for sid in [s for s, exp in self._revoked.items() if exp <= now]:
            del self._revoked[sid]

    def revoke(self, sid: str, expires_at: float) -> bool:
        """Remember `sid` as revoked until `expires_at`; False if it was already revoked."""
        self._prune()
        if sid in self._revoked:
            return False
        self._revoked[sid] = float(expires_at)
        return True

    def is_revoked(self, sid: str) -> bool:
        exp = self._revoked.get(sid)
        return exp is not None and exp > self._clock()

    def count(self) -> int:
        self._prune()
        return len(self._revoked)
