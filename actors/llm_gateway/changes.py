"""Long-polls of a versioned actor: a replica's call waits in the actor until the version moves.

An actor that hands out ``snapshot(since_version)`` (``None`` while unchanged) adds an ``async``
method that returns the same snapshot but holds the call while there is nothing new, at most
``timeout`` seconds; every change calls ``Changes.notify()``. A replica re-arms the call as soon as it
returns (``deployments/llm_gateway/follow.py``), so a change reaches every replica in one actor
call and an idle gateway makes one call per actor and replica per ``HOLD_SECONDS``.

No change is missed: the replica passes the version it holds and the actor compares versions, so
a change made between two calls is answered at once by the next one. A restarted actor answers at
once too: its versions start elsewhere (the durable actors' at their record's epoch shifted 32 bits,
the others' at ``instance_base()``), so the version a replica holds is never the new instance's.

Being ``async``, such a method makes its actor an async actor in Ray: its plain methods still run
one at a time (on the actor's event loop, never interleaved, as they do not await), and the waits
run beside them.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable

HOLD_SECONDS = 30.0  # how long an actor holds a long-poll with nothing new before answering "unchanged"


def instance_base() -> int:
    """The first version of a non-durable actor instance: random, 31 bits shifted 32 (apart from any
    version an earlier instance reached), so a replica's known version never names a new instance's state."""
    return secrets.randbits(31) << 32


def newer(version: int, known: int) -> bool:
    """Whether an answer of ``version`` may replace a copy of ``known``: not an earlier version of the same
    instance (answers of two calls can arrive out of order). Versions of two instances differ in their
    upper bits and are never ordered: the answer, from the instance that answers now, wins."""
    return version >> 32 != known >> 32 or version >= known


class Changes:
    """Wakes the long-polls waiting in an actor when its state changes (one event per generation)."""

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def notify(self) -> None:
        """The state changed: wake every waiting call; later calls wait on a fresh event."""
        if self._event is not None:
            self._event.set()
        self._event = None

    async def wait(self, unchanged: Callable[[], bool], timeout: float) -> None:
        """Return when ``unchanged()`` is false (checked at each change) or after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        while unchanged():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            if self._event is None or self._loop is not loop:
                self._event, self._loop = asyncio.Event(), loop
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._event.wait()
