"""The anchor's algorithm as a policy: proxmox-lxc-autoscale's published loop, for judging ours against it.

Reimplemented from its documented behaviour (defaults of its configuration):

* Every `poll_interval` (300 s) the loop looks at each container's CPU% and
  RAM% (used over allocated) against the tier's thresholds (CPU 80/20,
  memory 80/20).
* CPU up: `int((cpu% - upper) / cpu_scale_divisor)` cores (divisor 2.0),
  clamped to `core_min_increment`..`core_max_increment` (1..2); skipped, not
  clamped, when the result would pass the tier's maximum. CPU down:
  `max(1, int((lower - cpu%) / divisor))`, at most down to the tier's minimum,
  at least `core_min_increment`.
* Memory up: `max(memory_min_increment × m, (ram% - upper) × memory_min_increment
  / memory_scale_factor)` MB (256, 1.5). Memory down: the same decrement rule
  as CPU in MB, at least `min_decrease_chunk × m` (128), never below the
  tier's minimum.
* `m`, the behaviour multiplier, is 1.0 (`normal`), times 0.8 during off-peak
  hours (22:00-06:00, simulated clock here).
* Host capacity: the host's total minus a reserve (10 % of cores, at least 1;
  2048 MB), decreased by each scale-up of the same pass. The allocations the
  containers already hold are not subtracted (as published).

The tier bounds (min/max cores, minimum memory) are the container's own
`Limits`, the same ones the other policies get, so the comparison differs only
in the algorithm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .policy import ContainerView, Decision, HostView

DAY = 86_400.0


@dataclass(frozen=True)
class AnchorSettings:
    poll_interval: float = 300
    cpu_upper: float = 80
    cpu_lower: float = 20
    memory_upper: float = 80
    memory_lower: float = 20
    core_min_increment: int = 1
    core_max_increment: int = 2
    memory_min_increment: int = 256
    min_decrease_chunk: int = 128
    cpu_scale_divisor: float = 2.0
    memory_scale_factor: float = 1.5
    reserve_cpu_percent: float = 10
    reserve_memory_mb: int = 2048
    off_peak_start: int = 22
    off_peak_end: int = 6


class AnchorPolicy:
    name = "anchor"

    def __init__(self, settings: AnchorSettings | None = None) -> None:
        self.s = settings or AnchorSettings()
        self.last_poll: float | None = None

    def multiplier(self, now: float) -> float:
        hour = int((now % DAY) // 3600)
        off_peak = hour >= self.s.off_peak_start or hour < self.s.off_peak_end
        return 0.8 if off_peak else 1.0

    def _decrement(self, pct: float, lower: float, current: int, min_decrement: int, minimum: int) -> int:
        dynamic = max(1, int((lower - pct) / self.s.cpu_scale_divisor))
        return max(min(current - minimum, dynamic), min_decrement)

    def decide(self, now: float, hosts: Sequence[HostView]) -> list[Decision]:
        if self.last_poll is not None and now - self.last_poll < self.s.poll_interval:
            return []
        self.last_poll = now
        m = self.multiplier(now)
        out: list[Decision] = []
        for host in hosts:
            free_cores = host.cores - max(1, int(host.cores * self.s.reserve_cpu_percent / 100))
            free_mem = host.memory_mb - self.s.reserve_memory_mb
            for view in host.by_priority():
                if not view.samples:
                    continue
                cpu, free_cores = self._cpu(now, host.name, view, free_cores)
                ram, free_mem = self._memory(now, host.name, view, free_mem, m)
                out += [d for d in (cpu, ram) if d is not None]
        return out

    def _cpu(self, now: float, host: str, view: ContainerView, free: int) -> tuple[Decision | None, int]:
        s, lim, current = self.s, view.limits, view.allocation.cores
        pct = view.samples[-1].cpu_pct
        inputs = {"cpu_pct": pct, "free_cores": free, "tier": view.tier_inputs()}

        def make(action: str, target: int, reason: str) -> Decision:
            return Decision(now, host, view.vmid, "cpu", action, current, target, reason, dict(inputs))

        if pct > s.cpu_upper:
            step = min(max(s.core_min_increment, int((pct - s.cpu_upper) / s.cpu_scale_divisor)), s.core_max_increment)
            if current + step > lim.max_cores:
                return make("hold", current, f"above {s.cpu_upper:g} % but {current} + {step} passes max_cores"), free
            if free < step:
                held = make("hold", current + step, f"host capacity: {step} cores needed, {free} available")
                held.outcome = "refused_capacity"
                return held, free
            return make("set", current + step, f"CPU above {s.cpu_upper:g} %"), free - step
        if pct < s.cpu_lower and current > lim.min_cores:
            step = self._decrement(pct, s.cpu_lower, current, s.core_min_increment, lim.min_cores)
            target = max(lim.min_cores, current - step)
            return make("set", target, f"CPU below {s.cpu_lower:g} %"), free + current - target
        return None, free

    def _memory(self, now: float, host: str, view: ContainerView, free: int, m: float) -> tuple[Decision | None, int]:
        s, lim, current = self.s, view.limits, view.allocation.memory_mb
        pct = 100.0 * view.samples[-1].memory_used_mb / max(1, current)
        inputs = {"ram_pct": round(pct, 2), "free_memory_mb": free, "multiplier": m, "tier": view.tier_inputs()}

        def make(action: str, target: int, reason: str) -> Decision:
            return Decision(now, host, view.vmid, "ram", action, current, target, reason, dict(inputs))

        if pct > s.memory_upper:
            step = max(
                int(s.memory_min_increment * m),
                int((pct - s.memory_upper) * s.memory_min_increment / s.memory_scale_factor),
            )
            if free < step:
                held = make("hold", current + step, f"host capacity: {step} MB needed, {free} available")
                held.outcome = "refused_capacity"
                return held, free
            return make("set", current + step, f"memory above {s.memory_upper:g} %"), free - step
        if pct < s.memory_lower and current > lim.min_memory_mb:
            step = self._decrement(pct, s.memory_lower, current, int(s.min_decrease_chunk * m), lim.min_memory_mb)
            target = max(lim.min_memory_mb, current - step)
            return make("set", target, f"memory below {s.memory_lower:g} %"), free + current - target
        return None, free
