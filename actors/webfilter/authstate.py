"""Single-use and windowed authentication state shared by every replica.

- WebSocket tokens: 64 hex characters, valid 2 minutes, consumed on first use (memory only: a
  client whose token was lost with the actor asks for a new one).
- Revoked JWT ids (logout) and used refresh-token ids (single-use rotation), kept until they expire.
- Login failures per client IP in a sliding window; a locked IP gets 429 until the window clears.
- DNS detection slots (at most `max_scans` at once; memory only, a restart frees them).

Revocations and login failures are durable (`rayfleet.durable.DurableMap`, streams
``webfilter/revoked`` and ``webfilter/lockouts``): each change is stored before the call returns,
so a restarted actor still refuses a revoked token and still locks a locked-out address, with the
same expiry (absolute timestamps are stored, not durations).
"""

from __future__ import annotations

import secrets
import time

from rayfleet.durable import DurableMap, RecordStore, open_store

REVOKED_STREAM = "webfilter/revoked"
LOCKOUT_STREAM = "webfilter/lockouts"
PRUNE_EVERY = 30.0  # seconds between sweeps of expired revocations and failures


class AuthState:
    def __init__(
        self,
        attempts: int = 5,
        window_seconds: float = 300.0,
        ws_ttl: float = 120.0,
        max_scans: int = 2,
        durable_dsn: str | None = None,
    ) -> None:
        """`durable_dsn` names the store (`rayfleet.durable.open_store`: ``sqlite:///path`` or
        ``postgresql://...``; None: ``RAYFLEET_DURABLE_DSN`` or the default under the rayfleet home)."""
        self.attempts = attempts
        self.window = window_seconds
        self.ws_ttl = ws_ttl
        self.max_scans = max_scans
        self.ws_tokens: dict[str, float] = {}
        store: RecordStore = open_store(durable_dsn)
        self.revoked = DurableMap(store, REVOKED_STREAM)  # jti -> expiry (epoch seconds)
        self.failures = DurableMap(store, LOCKOUT_STREAM)  # ip -> failure times (epoch seconds) in the window
        self.scans = 0
        self._pruned = 0.0

    def _recent(self, ip: str, now: float) -> list[float]:
        return [t for t in self.failures.get(ip, []) if t > now - self.window]

    def _prune(self, now: float) -> None:
        self.ws_tokens = {t: exp for t, exp in self.ws_tokens.items() if exp > now}
        if now - self._pruned < PRUNE_EVERY:
            return
        self._pruned = now
        for jti, expiry in self.revoked.items():
            if expiry <= now:
                self.revoked.delete(jti)
        for ip, _ in self.failures.items():
            if not self._recent(ip, now):
                self.failures.delete(ip)

    def issue_ws_token(self) -> dict[str, float | str]:
        now = time.time()
        self._prune(now)
        token = secrets.token_hex(32)
        self.ws_tokens[token] = now + self.ws_ttl
        return {"token": token, "expires_in": self.ws_ttl}

    def consume_ws_token(self, token: str) -> bool:
        expiry = self.ws_tokens.pop(token, None)
        return expiry is not None and expiry > time.time()

    def revoke(self, jti: str, expires_at: float) -> bool:
        """Mark `jti` used/revoked; False when it already was (a replayed refresh token)."""
        now = time.time()
        self._prune(now)
        if self.is_revoked(jti):
            return False
        self.revoked.set(jti, expires_at)
        return True

    def is_revoked(self, jti: str) -> bool:
        expiry = self.revoked.get(jti)
        return expiry is not None and float(expiry) > time.time()

    def retry_after(self, ip: str) -> int:
        """Seconds until `ip` may try again (0: not locked)."""
        now = time.time()
        window = self._recent(ip, now)
        if len(window) < self.attempts:
            return 0
        return max(1, int(window[-self.attempts] + self.window - now + 0.999))

    def record_failure(self, ip: str) -> int:
        """Count a failure; returns the seconds until retry when this one locked the IP (else 0)."""
        now = time.time()
        self.failures.set(ip, [*self._recent(ip, now), now])
        return self.retry_after(ip)

    def locked(self) -> list[dict[str, float | int | str]]:
        now = time.time()
        self._pruned = 0.0
        self._prune(now)
        rows: list[dict[str, float | int | str]] = []
        for ip, _ in self.failures.items():
            window = self._recent(ip, now)
            if window:
                rows.append(
                    {"ip": ip, "failures": len(window), "retry_after": self.retry_after(ip), "last_failure": window[-1]}
                )
        return rows

    def clear(self, ip: str) -> bool:
        if ip not in self.failures:
            return False
        self.failures.delete(ip)
        return True

    def acquire_scan(self) -> bool:
        if self.scans >= self.max_scans:
            return False
        self.scans += 1
        return True

    def release_scan(self) -> None:
        self.scans = max(0, self.scans - 1)
