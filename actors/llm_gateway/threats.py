"""The threat ledger (``security.threat_ledger``): injection scores summed per client.

An actor of the ledger is a client: its IP address and the fingerprint prefix of its
API key. Replicas push batches of ``(actor, score)`` events; the ledger keeps each
actor's events of the last ``window_seconds`` and blocks an actor whose summed score
reaches ``threshold`` over at least ``min_events`` events, until the event that tipped
it leaves the window. At most ``max_actors`` actors are kept (least recently seen
dropped first). ``record`` answers with the blocked actors and their end times, the
snapshot replicas check locally; ``wait_blocked(version)`` is the same snapshot as a long-poll,
answered when a block starts, moves or is cleared (``changes.py``), so every replica learns of a
block another one caused without a timer.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from actors.llm_gateway.changes import HOLD_SECONDS, Changes, instance_base
from rayfleet.state import unlocked


class ThreatLedger:
    """The actor."""

    def __init__(
        self,
        threshold: float = 3.0,
        window_seconds: float = 600.0,
        min_events: int = 3,
        max_actors: int = 50_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._clock = clock
        self._events: OrderedDict[str, deque[tuple[float, float]]] = OrderedDict()
        self._blocked: dict[str, float] = {}
        self._version = instance_base()
        self._changes = Changes()
        self.configure(threshold, window_seconds, min_events, max_actors)

    def configure(self, threshold: float, window_seconds: float, min_events: int, max_actors: int) -> None:
        self.threshold, self.window, self.min_events, self.max_actors = (
            threshold,
            window_seconds,
            min_events,
            max_actors,
        )

    def _trim(self, events: deque[tuple[float, float]], now: float) -> None:
        while events and events[0][0] <= now - self.window:
            events.popleft()

    def record(self, batch: list[tuple[str, float]]) -> dict[str, float]:
        """Add ``(actor, score)`` events; returns the blocked actors with the time each block ends."""
        now = self._clock()
        before = dict(self._blocked)
        for actor, score in batch:
            events = self._events.get(actor)
            if events is None:
                events = self._events[actor] = deque()
                while len(self._events) > self.max_actors:
                    dropped, _ = self._events.popitem(last=False)
                    self._blocked.pop(dropped, None)
            self._events.move_to_end(actor)
            self._trim(events, now)
            events.append((now, score))
            if len(events) >= self.min_events and sum(s for _, s in events) >= self.threshold:
                self._blocked[actor] = now + self.window
        if self._blocked != before:
            self._bump()
        return self.blocked()

    def _bump(self) -> None:
        self._version += 1
        self._changes.notify()

    @unlocked
    async def wait_blocked(self, known_version: int = -1, timeout: float = HOLD_SECONDS) -> dict[str, Any]:
        """``{version, blocked}`` once the blocks differ from version ``known_version`` or after ``timeout``
        s (a long-poll). A block that ends by time is no change: replicas compare the end times themselves."""
        await self._changes.wait(lambda: self._version == known_version, timeout)
        return {"version": self._version, "blocked": self.blocked()}

    def blocked(self) -> dict[str, float]:
        now = self._clock()
        self._blocked = {a: until for a, until in self._blocked.items() if until > now}
        return dict(self._blocked)

    def view(self) -> dict[str, Any]:
        now = self._clock()
        blocked = self.blocked()
        actors = []
        for actor, events in reversed(self._events.items()):
            self._trim(events, now)
            if not events and actor not in blocked:
                continue
            actors.append(
                {
                    "actor": actor,
                    "events": len(events),
                    "score": round(sum(s for _, s in events), 3),
                    "blocked_until": blocked.get(actor),
                }
            )
        return {
            "threshold": self.threshold,
            "window_seconds": self.window,
            "min_events": self.min_events,
            "max_actors": self.max_actors,
            "tracked": len(self._events),
            "actors": actors[:1000],
        }

    def clear(self, actor: str | None = None) -> int:
        """Forget one actor (or every actor); returns how many were removed."""
        if actor is None:
            count = len(self._events)
            self._events.clear()
            self._blocked.clear()
            self._bump()
            return count
        found = self._events.pop(actor, None) is not None
        unblocked = self._blocked.pop(actor, None) is not None
        if unblocked:
            self._bump()
        return int(found or unblocked)
