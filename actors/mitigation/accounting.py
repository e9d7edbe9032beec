"""Bookkeeping a node derives from its data plane: monotonic counters and per-source attack records."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field


class Monotonic:
    """A counter read from HAProxy, kept monotonic across reloads (a new worker starts from 0)."""

    def __init__(self) -> None:
        self._base = 0
        self._last = 0

    def update(self, current: int) -> int:
        """Record a reading; return how much the total grew since the last one."""
        if current < self._last:
            self._base += self._last
            self._last = 0
        delta = current - self._last
        self._last = current
        return delta

    @property
    def total(self) -> int:
        return self._base + self._last


@dataclass
class SourceRecord:
    attacks: int = 0
    last_gpc: int = 0
    attack_type: str = ""
    flagged_since: float | None = None
    last_seen: float = field(default_factory=time.monotonic)


class ThreatBook:
    """Attacks per source and per type, and which sources are currently active threats."""

    def __init__(self, max_sources: int = 10000) -> None:
        self.sources: dict[str, SourceRecord] = {}
        self.attack_types: Counter[str] = Counter({"syn_flood": 0, "http_flood": 0, "slowloris": 0})
        self.max_sources = max_sources

    def record(self, src: str, attack_type: str, count: int = 1) -> SourceRecord:
        rec = self.sources.get(src)
        if rec is None:
            if len(self.sources) >= self.max_sources:
                oldest = min(self.sources, key=lambda k: self.sources[k].last_seen)
                del self.sources[oldest]
            rec = self.sources[src] = SourceRecord()
        rec.attacks += count
        rec.attack_type = attack_type
        rec.last_seen = time.monotonic()
        self.attack_types[attack_type] += count
        return rec

    def active(self, window: float) -> list[str]:
        now = time.monotonic()
        return [
            src for src, rec in self.sources.items() if rec.flagged_since is not None or now - rec.last_seen < window
        ]

    def top(self, n: int = 10) -> list[dict[str, object]]:
        ranked = sorted(self.sources.items(), key=lambda kv: kv[1].attacks, reverse=True)[:n]
        return [{"ip": src, "attacks": rec.attacks} for src, rec in ranked if rec.attacks > 0]
