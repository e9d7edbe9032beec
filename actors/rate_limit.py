"""Shared sliding-window rate-limit state: one named actor serves every replica.

A sliding-window *log*: each accepted hit is a timestamp; a hit is accepted
while fewer than `limit` timestamps are younger than `window` seconds. Ray runs
an actor's methods one at a time, so check-and-record is atomic across replicas
and nodes by construction. Keys are opaque strings; callers namespace them
(`asn:203.0.113.7`, `webfilter:login:198.51.100.2`).

The same `WindowDecision` is returned by the Redis Lua implementation of the ASN
API, so callers build identical headers whichever store answered.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

US = 1_000_000


@dataclass(frozen=True, slots=True)
class WindowDecision:
    """Outcome of one hit. Times are integer microseconds since the Unix epoch.

    `reset_us` is when the oldest counted hit leaves the window, i.e. the moment
    `remaining` next grows (for an empty window: now + window).
    """

    allowed: bool
    limit: int
    count: int
    now_us: int
    reset_us: int

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.count)

    @property
    def reset_epoch(self) -> int:
        """`X-RateLimit-Reset`: the reset moment as a Unix timestamp in whole seconds (rounded up)."""
        return math.ceil(self.reset_us / US)

    @property
    def retry_after(self) -> int:
        """`Retry-After` in whole seconds (rounded up, at least 1): waiting this long frees a slot."""
        return max(1, math.ceil((self.reset_us - self.now_us) / US))


class RateLimitWindow:
    """Per-key sliding-window logs. Plain class: rayfleet.state wraps it as a named actor."""

    def __init__(self, sweep_every: int = 4096, clock: Callable[[], float] = time.time) -> None:
        """``clock`` returns seconds since the epoch (as its siblings' clocks do); tests inject their own."""
        self._logs: dict[str, deque[int]] = {}
        self._sweep_every = sweep_every
        self._since_sweep = 0
        self._clock = clock

    def _now_us(self) -> int:
        return round(self._clock() * US)

    def _log(self, key: str, window_us: int, now_us: int) -> deque[int]:
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = deque()
        horizon = now_us - window_us
        while log and log[0] <= horizon:
            log.popleft()
        return log

    def _decision(
        self, allowed: bool, limit: int, log: deque[int], window_us: int, now_us: int, cost: int = 1
    ) -> WindowDecision:
        reset = (log[0] if log else now_us) + window_us
        if not allowed and cost > 1 and log:
            # a refused weighted hit fits once enough of the oldest hits have left the window
            need = min(len(log), len(log) + cost - limit)
            reset = log[max(need, 1) - 1] + window_us
        return WindowDecision(allowed=allowed, limit=limit, count=len(log), now_us=now_us, reset_us=reset)

    def _maybe_sweep(self, now_us: int, window_us: int) -> None:
        """Drop keys whose whole log has expired, so memory follows active clients only."""
        self._since_sweep += 1
        if self._since_sweep < self._sweep_every:
            return
        self._since_sweep = 0
        horizon = now_us - window_us
        for key in [k for k, log in self._logs.items() if not log or log[-1] <= horizon]:
            del self._logs[key]

    def hit(self, key: str, limit: int, window_seconds: float, cost: int = 1) -> WindowDecision:
        """Record `cost` hits if they all fit under `limit` in the window (all or none).

        A bulk request of N items costs N, exactly as N single requests would; when it
        is refused, `reset_us` is the moment all N fit (never, if N exceeds `limit`:
        callers refuse such requests before asking).
        """
        if limit < 0 or window_seconds <= 0 or cost < 1:
            raise ValueError("limit must be >= 0, window_seconds > 0 and cost >= 1")
        now = self._now_us()
        window_us = int(window_seconds * US)
        log = self._log(key, window_us, now)
        allowed = len(log) + cost <= limit
        if allowed:
            log.extend([now] * cost)
        decision = self._decision(allowed, limit, log, window_us, now, cost)
        if not log:
            del self._logs[key]
        self._maybe_sweep(now, window_us)
        return decision

    def hit_many(
        self, keys: list[str], limit: int, window_seconds: float, costs: list[int] | None = None
    ) -> list[WindowDecision]:
        """`hit` for each key in order (with its cost, 1 by default): one actor call for a batch."""
        if costs is None:
            return [self.hit(key, limit, window_seconds) for key in keys]
        return [self.hit(key, limit, window_seconds, cost) for key, cost in zip(keys, costs, strict=True)]

    def peek(self, key: str, limit: int, window_seconds: float) -> WindowDecision:
        """The state of `key` without recording anything (`allowed`: would a hit be accepted)."""
        now = self._now_us()
        window_us = int(window_seconds * US)
        log = self._log(key, window_us, now)
        decision = self._decision(len(log) < limit, limit, log, window_us, now)
        if not log:
            del self._logs[key]
        return decision

    def record(self, key: str, window_seconds: float) -> int:
        """Record a hit unconditionally (e.g. a failed login); returns the count in the window."""
        now = self._now_us()
        log = self._log(key, int(window_seconds * US), now)
        log.append(now)
        return len(log)

    def reset(self, key: str) -> bool:
        """Forget `key`; True when it had entries."""
        return self._logs.pop(key, None) is not None

    def size(self) -> int:
        """Number of keys currently held."""
        return len(self._logs)
