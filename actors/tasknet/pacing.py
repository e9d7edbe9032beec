"""When a node's background loops run next: Raft's timer and anti-entropy's backoff.

Both replace a loop that woke at a fixed short interval and mostly found nothing to do.

`RaftClock` keeps a `RaftCore`'s ticks on the wall clock without ticking in vain: the owner
sleeps until the next tick that does something (`delay`: a leader's heartbeat or check-quorum, a
follower's election timeout), and before it steps any message it calls `catch_up`, which applies
the ticks that went by meanwhile, so the core sees the same elapsed time as under a fixed ticker
(a message that resets the election timer resets it from now, not from the last wake-up). Ticks
missed because the loop itself was late (a stalled event loop) are dropped after the first one that
does something, as a fixed ticker that is late ticks once and goes on.

`Backoff` is anti-entropy's interval: `base` after any change, doubled after each round that found
nothing to repair, up to `cap`. Push gossip carries new events at once; anti-entropy is the repair
path, so an idle network pulls rarely, and a change brings it back to `base`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from actors.tasknet.raft import RaftCore

EPSILON = 1e-6  # seconds: a timer that fires this early still counts the tick it was set for


class RaftClock:
    def __init__(self, tick_s: float, now: Callable[[], float] = time.monotonic) -> None:
        self.tick_s = tick_s
        self._now = now
        self._at: float | None = None  # when the last tick applied was due

    def catch_up(self, raft: RaftCore) -> int:
        """Apply the ticks due since the last one (see the module's docstring); how many."""
        now = self._now()
        if self._at is None:
            self._at = now
            return 0
        owed = int((now - self._at + EPSILON) / self.tick_s)
        if owed <= 0:
            return 0
        due = raft.ticks_until_due()
        if due is not None and owed > due:  # late: tick up to the one that acts, drop the rest
            for _ in range(due):
                raft.tick()
            self._at = now
            return due
        for _ in range(owed):
            raft.tick()
        self._at += owed * self.tick_s
        return owed

    def deadline(self, raft: RaftCore) -> float | None:
        """The monotonic time of the next tick that does something; None when none will."""
        due = raft.ticks_until_due()
        if due is None:
            return None
        return (self._now() if self._at is None else self._at) + due * self.tick_s

    def delay(self, raft: RaftCore) -> float | None:
        """Seconds until `deadline`, at least 0; None when no tick will do anything."""
        at = self.deadline(raft)
        return None if at is None else max(0.0, at - self._now())


class Backoff:
    def __init__(self, base: float, cap: float) -> None:
        if not 0 < base <= cap:
            raise ValueError(f"backoff needs 0 < base ({base}) <= cap ({cap})")
        self.base = base
        self.cap = cap
        self.interval = base
        self.resets = 0  # times a change brought a backed-off interval back to base

    @property
    def backed_off(self) -> bool:
        return self.interval > self.base

    def quiet(self) -> None:
        """A round that found nothing: wait twice as long next time, at most `cap`."""
        self.interval = min(self.interval * 2, self.cap)

    def reset(self) -> None:
        """Something changed: back to `base`."""
        if self.backed_off:
            self.resets += 1
        self.interval = self.base
