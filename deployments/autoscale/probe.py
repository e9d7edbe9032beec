"""The health probe: `pct list` on every host over SSH, cached."""

from __future__ import annotations

import asyncio
import time

from .fleet import Fleet


class HealthProbe:
    """`pct list` on every host over SSH, cached for `ttl` seconds."""

    def __init__(self, fleet: Fleet, ttl: float) -> None:
        self.fleet = fleet
        self.ttl = ttl
        self._at = -1e9
        self._value: tuple[bool, str] = (False, "not probed")
        self._lock = asyncio.Lock()

    async def check(self) -> tuple[bool, str]:
        async with self._lock:
            if time.monotonic() - self._at >= self.ttl:
                results = await self.fleet.list_all()
                failed = [f"{h}: {(r.stderr.strip() or f'rc {r.rc}')[:200]}" for h, r in results.items() if not r.ok]
                self._value = (not failed, "; ".join(failed) or "ok")
                self._at = time.monotonic()
            return self._value
