"""Hybrid logical clock: (wall milliseconds, counter), monotonic across nodes."""

from __future__ import annotations

import time
from collections.abc import Callable


class HybridClock:
    def __init__(self, now_ms: Callable[[], int] | None = None) -> None:
        self._now = now_ms or (lambda: int(time.time() * 1000))
        self.wall = 0
        self.counter = 0

    def tick(self) -> list[int]:
        """A timestamp for a local event, after every timestamp seen so far."""
        now = self._now()
        if now > self.wall:
            self.wall, self.counter = now, 0
        else:
            self.counter += 1
        return [self.wall, self.counter]

    def observe(self, stamp: list[int]) -> None:
        """Merge a received timestamp so later local events sort after it."""
        wall, counter = int(stamp[0]), int(stamp[1])
        if wall > self.wall or (wall == self.wall and counter > self.counter):
            self.wall, self.counter = wall, counter
