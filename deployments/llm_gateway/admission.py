"""Admission control for ``/v1/*``: a bounded number in flight plus a bounded waiting room.

Limits are per replica: the configured ``max_in_flight``/``max_queued`` are cluster-wide
figures divided by the replica count given to the deployment, so the defaults hold for
the cluster as a whole. A request that finds both full is refused at once (503 with
``Retry-After``) rather than queued without bound.
"""

from __future__ import annotations

import asyncio
from collections import deque


class Admission:
    def __init__(self, max_in_flight: int, max_queued: int) -> None:
        self.max_in_flight = max_in_flight
        self.max_queued = max_queued
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def enabled(self) -> bool:
        return self.max_in_flight > 0

    @property
    def queued(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> bool:
        """Take a slot (waiting in the room if needed); False when refused."""
        if not self.enabled:
            return True
        if self.in_flight < self.max_in_flight and not self._waiters:
            self.in_flight += 1
            return True
        if len(self._waiters) >= self.max_queued:
            return False
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut in self._waiters:
                self._waiters.remove(fut)
            elif fut.done() and not fut.cancelled():
                self.release()
            raise
        return True

    def release(self) -> None:
        if not self.enabled:
            return
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)  # the slot passes straight to the waiter
                return
        self.in_flight = max(0, self.in_flight - 1)
