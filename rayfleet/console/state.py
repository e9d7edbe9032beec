"""What the console's routes share: the fleet, its placement and probe sources, the last report."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from rayfleet.placement import Placement
from rayfleet.status import Fleet, FleetReport, Prober, fleet_report, http_prober

log = logging.getLogger(__name__)

PlacementSource = Callable[[Sequence[str]], Awaitable[Mapping[str, Placement]]]
ProberFactory = Callable[[], AbstractAsyncContextManager[Prober]]

# browsers poll every few seconds: one report serves every poll within this age
MAX_AGE = 2.0


async def ray_placement(apps: Sequence[str]) -> Mapping[str, Placement]:
    """Serve's status and the replicas' nodes, read from Ray (the console is a Serve replica)."""
    from rayfleet.placement import snapshot

    return await asyncio.to_thread(snapshot, apps)


@dataclass
class ConsoleState:
    fleet: Fleet
    placement: PlacementSource
    probes: ProberFactory = http_prober
    max_age: float = MAX_AGE
    clock: Callable[[], float] = time.monotonic
    _placed: Mapping[str, Placement] = field(default_factory=dict, init=False)
    _placed_at: float | None = field(default=None, init=False)
    _last: tuple[float, FleetReport] | None = field(default=None, init=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)

    @classmethod
    def from_ray(cls, fleet: Fleet) -> ConsoleState:
        return cls(fleet, ray_placement)

    async def report(self) -> FleetReport:
        """The fleet report, rebuilt when the last one is older than `max_age` (concurrent callers share it)."""
        async with self._lock:
            if self._last is not None and self.clock() - self._last[0] < self.max_age:
                return self._last[1]
            await self._refresh_placement()
            async with self.probes() as probe:
                report = await fleet_report(self.fleet, self._placed, probe, self._placed_at)
            self._last = (self.clock(), report)
            return report

    async def _refresh_placement(self) -> None:
        """Ask for the placement; when Ray does not answer, the last one stays (with its own time)."""
        try:
            self._placed = await self.placement(self.fleet.apps)
            self._placed_at = time.time()
        except Exception as exc:  # Ray busy or restarting: the page says how old the placement is
            log.warning("console: placement unavailable: %s: %s", type(exc).__name__, exc)
