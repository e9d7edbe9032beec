"""Token buckets shared by every replica, handed out in leases.

A replica asks for a few tokens at a time (``acquire``) and spends them locally, so the
hot path makes one actor call per lease rather than per request; unused tokens go back
with ``release``. The bucket never hands out more than it holds, so the cluster-wide
limit holds exactly: at most ``capacity`` requests in a burst, refilled at
``capacity / period`` per second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Bucket:
    capacity: float
    rate: float
    tokens: float
    updated: float

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
            self.updated = now


class RateLimiter:
    """The actor: named buckets, created on first use with the caller's capacity."""

    def __init__(self, clock: Callable[[], float] = time.time, max_buckets: int = 100_000) -> None:
        self._clock = clock
        self._buckets: dict[str, Bucket] = {}
        self._max = max_buckets

    def _bucket(self, key: str, capacity: float, period: float) -> Bucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None or bucket.capacity != capacity:
            if len(self._buckets) >= self._max:
                self._evict(now)
            bucket = self._buckets[key] = Bucket(capacity, capacity / period, capacity, now)
        bucket.refill(now)
        return bucket

    def _evict(self, now: float) -> None:
        full = [k for k, b in self._buckets.items() if b.tokens + (now - b.updated) * b.rate >= b.capacity]
        for key in full or list(self._buckets)[: len(self._buckets) // 10 + 1]:
            del self._buckets[key]

    def acquire(self, key: str, capacity: float, period: float, need: float, want: float) -> tuple[float, float]:
        """Grant ``want`` tokens if held, else at least ``need``, else none.

        Returns (granted, retry_after_seconds); retry_after is 0 when granted.
        """
        bucket = self._bucket(key, capacity, period)
        if bucket.tokens >= want:
            bucket.tokens -= want
            return want, 0.0
        if bucket.tokens >= need:
            granted = bucket.tokens
            bucket.tokens = 0.0
            return granted, 0.0
        return 0.0, (need - bucket.tokens) / bucket.rate if bucket.rate > 0 else period

    def debit(self, key: str, capacity: float, period: float, amount: float) -> float:
        """Take tokens after the fact (may go negative: later requests wait); returns the balance."""
        bucket = self._bucket(key, capacity, period)
        bucket.tokens -= amount
        return bucket.tokens

    def release(self, key: str, amount: float) -> None:
        bucket = self._buckets.get(key)
        if bucket is not None and amount > 0:
            bucket.refill(self._clock())
            bucket.tokens = min(bucket.capacity, bucket.tokens + amount)

    def level(self, key: str) -> float | None:
        bucket = self._buckets.get(key)
        if bucket is None:
            return None
        bucket.refill(self._clock())
        return bucket.tokens
