"""Single-use and windowed authentication state shared by every replica.

- WebSocket tokens: 64 hex characters, valid 2 minutes, consumed on first use.
- Revoked JWT ids (logout) and used refresh-token ids (single-use rotation), kept until they expire.
- Login failures per client IP in a sliding window; a locked IP gets 429 until the window clears.
- DNS detection slots (at most `max_scans` at once).
"""

from __future__ import annotations

import secrets
import time
from collections import deque


class AuthState:
    def __init__(
        self, attempts: int = 5, window_seconds: float = 300.0, ws_ttl: float = 120.0, max_scans: int = 2
    ) -> None:
        self.attempts = attempts
        self.window = window_seconds
        self.ws_ttl = ws_ttl
        self.max_scans = max_scans
        self.ws_tokens: dict[str, float] = {}
        self.revoked: dict[str, float] = {}
        self.failures: dict[str, deque[float]] = {}
        self.scans = 0

    def _prune(self, now: float) -> None:
        self.ws_tokens = {t: exp for t, exp in self.ws_tokens.items() if exp > now}
        self.revoked = {j: exp for j, exp in self.revoked.items() if exp > now}
        for ip in list(self.failures):
            window = self.failures[ip]
            while window and window[0] <= now - self.window:
                window.popleft()
            if not window:
                del self.failures[ip]

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
        if jti in self.revoked:
            return False
        self.revoked[jti] = expires_at
        return True

    def is_revoked(self, jti: str) -> bool:
        expiry = self.revoked.get(jti)
        return expiry is not None and expiry > time.time()

    def retry_after(self, ip: str) -> int:
        """Seconds until `ip` may try again (0: not locked)."""
        now = time.time()
        window = self.failures.get(ip)
        if not window:
            return 0
        while window and window[0] <= now - self.window:
            window.popleft()
        if len(window) < self.attempts:
            return 0
        return max(1, int(window[-self.attempts] + self.window - now + 0.999))

    def record_failure(self, ip: str) -> int:
        """Count a failure; returns the seconds until retry when this one locked the IP (else 0)."""
        self.failures.setdefault(ip, deque()).append(time.time())
        return self.retry_after(ip)

    def locked(self) -> list[dict[str, float | int | str]]:
        now = time.time()
        self._prune(now)
        return [
            {"ip": ip, "failures": len(w), "retry_after": self.retry_after(ip), "last_failure": w[-1]}
            for ip, w in self.failures.items()
        ]

    def clear(self, ip: str) -> bool:
        return self.failures.pop(ip, None) is not None

    def acquire_scan(self) -> bool:
        if self.scans >= self.max_scans:
            return False
        self.scans += 1
        return True

    def release_scan(self) -> None:
        self.scans = max(0, self.scans - 1)
