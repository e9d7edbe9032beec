"""Bounded usage history: one ring buffer of samples per container."""

from __future__ import annotations

from collections import deque

from .sampling import Counters, Sample, derive


class RingHistory:
    """The last `maxlen` samples of each container, and its last raw read.

    Memory is bounded by design (the anchor's ever-growing JSON file is the
    defect this replaces): a container holds at most `maxlen` samples, and a
    container no longer seen is dropped with `retain`.
    """

    def __init__(self, maxlen: int = 720) -> None:
        self.maxlen = maxlen
        self._samples: dict[str, deque[Sample]] = {}
        self._last: dict[str, Counters] = {}

    def observe(self, vmid: str, counters: Counters) -> Sample | None:
        """Record a read; the sample of the interval since the previous read, if any."""
        prev = self._last.get(vmid)
        self._last[vmid] = counters
        if prev is None:
            return None
        sample = derive(prev, counters)
        if sample is not None:
            self._samples.setdefault(vmid, deque(maxlen=self.maxlen)).append(sample)
        return sample

    def samples(self, vmid: str) -> list[Sample]:
        return list(self._samples.get(vmid, ()))

    def latest(self, vmid: str) -> Sample | None:
        ring = self._samples.get(vmid)
        return ring[-1] if ring else None

    def containers(self) -> list[str]:
        return sorted(self._samples, key=int)

    def retain(self, vmids: set[str]) -> None:
        """Forget containers that are gone (destroyed, stopped, migrated away)."""
        for vmid in [v for v in self._last if v not in vmids]:
            self._last.pop(vmid, None)
            self._samples.pop(vmid, None)
