"""Scaling policies: ours (forecast + anomaly + hysteresis), the anchor's thresholds, and none.

A policy sees, per host, each container's allocation and its sample history,
and returns `Decision`s. Only decisions with `action == "set"` change anything;
`hold` and `flag` decisions are logged so every non-action is explainable too.

Ours, per container and resource, once per cycle:

1. Forecast. CPU: the `cpu_percentile` of cores used over `window_seconds`
   (the VPA recommender's target), raised to a short-horizon linear trend
   (`trend_seconds` of history projected `horizon_seconds` ahead). A
   saturated container (CPU% at 100) hides its demand, so its forecast is at
   least `saturated_factor` times its cores. Memory: the peak used over the
   window, raised to its trend, and after an OOM kill at least the allocation
   times `oom_bump` (VPA's 1.2).
2. Right-size. Cores = ceil(forecast * (1 + margin) / cpu_target); memory =
   forecast * (1 + margin), rounded up to `memory_step_mb`, never below the
   newest observed use plus the margin. Clamped to the per-container limits.
3. Hysteresis. Up: the recommendation must exceed the allocation for
   `upscale_delay_seconds`, the smallest recommendation over that span wins.
   Down: the largest recommendation over `downscale_delay_seconds` must be
   under the allocation (HPA's stabilisation window), and the recommendations
   over that span must have settled (within one core, or the memory
   tolerance), so a fading peak is followed in one step, not a staircase. Memory changes under
   `memory_tolerance` are ignored. Cooldowns per direction after an action.
4. Anomaly. An IsolationForest on the container's own window: while it flags
   the newest behaviour, no scale-down happens; a saturated container whose
   CPU per unit of traffic jumps above `runaway_factor` times its baseline is
   a runaway and gets no more cores (flagged instead).
5. Capacity. A scale-up never takes the host over its cores (times
   `cpu_overcommit`) or memory; it is clamped to what is free, or held.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, Field, model_validator

from .anomaly import AnomalyDetector, Verdict
from .sampling import Sample


class Limits(BaseModel):
    """A container's tier: the bounds the policy keeps it in, and its priority under contention
    (on a host short of free cores or memory, higher-priority containers are served first)."""

    min_cores: int = Field(default=1, ge=1)
    max_cores: int = Field(default=8, ge=1, le=128)
    min_memory_mb: int = Field(default=256, ge=64)
    max_memory_mb: int = Field(default=8192, ge=64, le=1_048_576)
    priority: int = Field(default=0, ge=-1000, le=1000)

    @model_validator(mode="after")
    def _ordered(self) -> Limits:
        if self.min_cores > self.max_cores:
            raise ValueError(f"min_cores {self.min_cores} is above max_cores {self.max_cores}")
        if self.min_memory_mb > self.max_memory_mb:
            raise ValueError(f"min_memory_mb {self.min_memory_mb} is above max_memory_mb {self.max_memory_mb}")
        return self


class ModelSettings(BaseModel):
    """Settings of our policy (defaults in simulated seconds at one sample a minute)."""

    window_seconds: float = Field(default=1200, gt=0)
    cpu_percentile: float = Field(default=90, ge=50, le=100)
    trend_seconds: float = Field(default=600, gt=0)
    horizon_seconds: float = Field(default=300, ge=0)
    margin: float = Field(default=0.15, ge=0, le=1)
    cpu_target: float = Field(default=0.85, gt=0.1, le=1)
    saturated_pct: float = Field(default=97, gt=50, le=100)
    saturated_factor: float = Field(default=3.0, ge=1)
    memory_step_mb: int = Field(default=64, ge=1)
    memory_margin: float = Field(default=0.30, ge=0, le=2)
    memory_window_seconds: float = Field(default=7200, gt=0)
    memory_tolerance: float = Field(default=0.20, ge=0, le=1)
    oom_bump: float = Field(default=1.2, ge=1)
    upscale_delay_seconds: float = Field(default=0, ge=0)
    downscale_delay_seconds: float = Field(default=1200, ge=0)
    up_cooldown_seconds: float = Field(default=0, ge=0)
    down_cooldown_seconds: float = Field(default=600, ge=0)
    anomaly_contamination: float = Field(default=0.05, gt=0, lt=0.5)
    anomaly_refit_seconds: float = Field(default=1800, gt=0)
    runaway_factor: float = Field(default=2.0, gt=1)
    runaway_confirm_cycles: int = Field(default=3, ge=0)
    cpu_overcommit: float = Field(default=1.0, gt=0)


@dataclass(frozen=True)
class Allocation:
    cores: int
    memory_mb: int


@dataclass
class ContainerView:
    vmid: str
    allocation: Allocation
    samples: Sequence[Sample]
    limits: Limits
    tier: str = "default"

    def tier_inputs(self) -> dict[str, Any]:
        return {"name": self.tier, **self.limits.model_dump()}

    def sample_summary(self) -> dict[str, Any]:
        """What the decision saw of the history: its span and the newest sample."""
        newest = self.samples[-1]
        return {
            "count": len(self.samples),
            "first_t": self.samples[0].t,
            "last_t": newest.t,
            "cpu_pct": newest.cpu_pct,
            "cpu_cores_used": newest.cpu_cores_used,
            "memory_used_mb": newest.memory_used_mb,
            "oom_kills": newest.oom_kills,
        }


@dataclass
class HostView:
    """A node: its capacity, the containers the policy manages, and what other guests hold.

    `other_cores` / `other_memory_mb` are the allocations of running guests the policy does
    not manage (ignored, not yet sampled, VMs); `source` says where the capacity came from."""

    name: str
    cores: int
    memory_mb: int
    containers: dict[str, ContainerView]
    other_cores: int = 0
    other_memory_mb: int = 0
    source: str = "config"

    def allocated(self) -> tuple[int, int]:
        cores = sum(c.allocation.cores for c in self.containers.values()) + self.other_cores
        memory = sum(c.allocation.memory_mb for c in self.containers.values()) + self.other_memory_mb
        return cores, memory

    def by_priority(self) -> list[ContainerView]:
        """Higher priority first (they claim free capacity first), then by id."""
        return sorted(self.containers.values(), key=lambda c: (-c.limits.priority, int(c.vmid)))


@dataclass
class Decision:
    t: float
    host: str
    vmid: str
    resource: str  # "cpu" or "ram" (the metric's label values)
    action: str  # "set", "hold", "flag" or "skip"
    current: int
    target: int
    reason: str
    inputs: dict[str, Any] = field(default_factory=dict)
    applied: bool = False
    dry_run: bool = False
    error: str | None = None
    outcome: str = ""
    """applied, failed, dry_run, held, refused_capacity, flagged or skipped (see `settle`)."""

    def settle(self) -> None:
        """Fill `outcome` once the decision was applied (or not); a refusal set by the policy stays."""
        if self.outcome:
            return
        if self.action == "set":
            self.outcome = "dry_run" if self.dry_run else "applied" if self.applied else "failed"
        else:
            self.outcome = {"hold": "held", "flag": "flagged", "skip": "skipped"}.get(self.action, self.action)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


OUTCOMES = ("applied", "failed", "dry_run", "held", "refused_capacity", "flagged", "skipped")
ACTIONS = ("set", "hold", "flag", "skip")


class Policy(Protocol):
    name: str

    def decide(self, now: float, hosts: Sequence[HostView]) -> list[Decision]: ...


class StaticPolicy:
    """No scaling: the allocation the containers were created with."""

    name = "static"

    def decide(self, now: float, hosts: Sequence[HostView]) -> list[Decision]:
        return []


class ThresholdPolicy:
    """The anchor's loop: newest CPU% and RAM% against 75/30, one step at a time, no delays."""

    name = "threshold"

    def __init__(self, up: float = 75, down: float = 30, core_step: int = 1, ram_step_mb: int = 512) -> None:
        self.up, self.down, self.core_step, self.ram_step = up, down, core_step, ram_step_mb

    def decide(self, now: float, hosts: Sequence[HostView]) -> list[Decision]:
        out: list[Decision] = []
        for host in hosts:
            for view in host.by_priority():
                if not view.samples:
                    continue
                s, a, lim = view.samples[-1], view.allocation, view.limits
                ram_pct = 100.0 * s.memory_used_mb / max(1, a.memory_mb)
                cores = a.cores + (
                    self.core_step if s.cpu_pct > self.up else -self.core_step if s.cpu_pct < self.down else 0
                )
                memory = a.memory_mb + (
                    self.ram_step if ram_pct > self.up else -self.ram_step if ram_pct < self.down else 0
                )
                cores = min(lim.max_cores, max(lim.min_cores, cores))
                memory = min(lim.max_memory_mb, max(lim.min_memory_mb, memory))
                inputs = {"cpu_pct": s.cpu_pct, "ram_pct": round(ram_pct, 2), "tier": view.tier_inputs()}
                if cores != a.cores:
                    out.append(Decision(now, host.name, view.vmid, "cpu", "set", a.cores, cores, "threshold", inputs))
                if memory != a.memory_mb:
                    out.append(
                        Decision(now, host.name, view.vmid, "ram", "set", a.memory_mb, memory, "threshold", inputs)
                    )
        return out


@dataclass
class _Track:
    """What our policy remembers about one container."""

    recs: dict[str, deque[tuple[float, int]]] = field(
        default_factory=lambda: {"cpu": deque(maxlen=512), "ram": deque(maxlen=512)}
    )
    last_up: dict[str, float] = field(default_factory=dict)
    last_down: dict[str, float] = field(default_factory=dict)
    runaway_baseline: float | None = None
    suspect_cycles: int = 0


def _slope(ts: np.ndarray, ys: np.ndarray) -> float:
    """Theil-Sen slope (median of pairwise slopes): a ramp moves it, a one-sample step does not."""
    n = len(ts)
    if n < 3:
        return 0.0
    i, j = np.triu_indices(n, 1)
    dt = ts[j] - ts[i]
    keep = dt > 0
    if not keep.any():
        return 0.0
    return float(np.median((ys[j] - ys[i])[keep] / dt[keep]))


class ForecastPolicy:
    """Ours: see the module docstring."""

    name = "model"

    def __init__(self, settings: ModelSettings | None = None) -> None:
        self.s = settings or ModelSettings()
        self.detector = AnomalyDetector(
            contamination=self.s.anomaly_contamination, refit_seconds=self.s.anomaly_refit_seconds
        )
        self.tracks: dict[str, _Track] = {}

    # ------------------------------------------------------------ forecasts
    def _window(self, samples: Sequence[Sample], now: float, seconds: float) -> list[Sample]:
        return [s for s in samples if s.t > now - seconds]

    def cpu_forecast(self, samples: Sequence[Sample], now: float) -> dict[str, float]:
        s = self.s
        window = self._window(samples, now, s.window_seconds) or list(samples[-1:])
        used = np.array([x.cpu_cores_used for x in window])
        pct = float(np.percentile(used, s.cpu_percentile))
        recent = self._window(samples, now, s.trend_seconds)
        slope = _slope(np.array([x.t for x in recent]), np.array([x.cpu_cores_used for x in recent]))
        level = float(np.mean([x.cpu_cores_used for x in recent[-3:]])) if recent else pct
        trend = level + max(0.0, slope) * s.horizon_seconds
        newest = samples[-1]
        saturated = newest.cpu_pct >= s.saturated_pct
        forecast = max(pct, trend, newest.cores * s.saturated_factor if saturated else 0.0)
        return {
            "p": round(pct, 4),
            "trend": round(trend, 4),
            "slope_per_min": round(slope * 60, 5),
            "forecast": round(forecast, 4),
            "cpu_pct": newest.cpu_pct,
            "saturated": saturated,
        }

    def ram_forecast(self, samples: Sequence[Sample], now: float, memory_mb: int) -> dict[str, float]:
        s = self.s
        window = self._window(samples, now, s.memory_window_seconds) or list(samples[-1:])
        peak = max(x.memory_used_mb + x.swap_used_mb for x in window)
        recent = self._window(samples, now, s.trend_seconds)
        slope = _slope(np.array([x.t for x in recent]), np.array([x.memory_used_mb for x in recent]))
        newest = samples[-1]
        trend = newest.memory_used_mb + max(0.0, slope) * s.horizon_seconds
        ooms = sum(x.oom_kills for x in recent[-3:]) if recent else 0
        forecast = max(peak, trend, memory_mb * s.oom_bump if ooms else 0.0)
        return {
            "peak_mb": round(peak, 1),
            "trend_mb": round(trend, 1),
            "slope_mb_per_min": round(slope * 60, 3),
            "used_mb": newest.memory_used_mb,
            "oom_kills": ooms,
            "forecast_mb": round(forecast, 1),
        }

    def recommend_cores(self, f: dict[str, float], lim: Limits) -> int:
        raw = math.ceil(f["forecast"] * (1 + self.s.margin) / self.s.cpu_target - 1e-9)
        return min(lim.max_cores, max(lim.min_cores, raw))

    def recommend_memory(self, f: dict[str, float], lim: Limits) -> int:
        step = self.s.memory_step_mb
        floor = f["used_mb"] * (1 + self.s.memory_margin)
        raw = max(f["forecast_mb"] * (1 + self.s.memory_margin), floor)
        return min(lim.max_memory_mb, max(lim.min_memory_mb, int(math.ceil(raw / step) * step)))

    # ------------------------------------------------------------- decisions
    def decide(self, now: float, hosts: Sequence[HostView]) -> list[Decision]:
        out: list[Decision] = []
        for host in hosts:
            free_cores, free_mem = self._free(host)
            for view in host.by_priority():
                if len(view.samples) < 2:
                    continue
                capacity = self._capacity(host, free_cores, free_mem)
                for decision in self._container(now, host.name, view, free_cores, free_mem, capacity):
                    out.append(decision)
                    if decision.action == "set":
                        delta = decision.target - decision.current
                        if decision.resource == "cpu":
                            free_cores -= delta
                        else:
                            free_mem -= delta
        return out

    def _free(self, host: HostView) -> tuple[int, int]:
        cores, memory = host.allocated()
        return int(host.cores * self.s.cpu_overcommit) - cores, host.memory_mb - memory

    def _capacity(self, host: HostView, free_cores: int, free_mem: int) -> dict[str, Any]:
        """The host as this container's decision sees it (after the decisions made before it this cycle)."""
        cores = int(host.cores * self.s.cpu_overcommit)
        return {
            "source": host.source,
            "host_cores": cores,
            "host_memory_mb": host.memory_mb,
            "allocated_cores": cores - free_cores,
            "allocated_memory_mb": host.memory_mb - free_mem,
            "free_cores": free_cores,
            "free_memory_mb": free_mem,
        }

    def _container(
        self, now: float, host: str, view: ContainerView, free_cores: int, free_mem: int, capacity: dict[str, Any]
    ) -> list[Decision]:
        track = self.tracks.setdefault(view.vmid, _Track())
        a, lim = view.allocation, view.limits
        cpu_f = self.cpu_forecast(view.samples, now)
        ram_f = self.ram_forecast(view.samples, now, a.memory_mb)
        recs = {"cpu": self.recommend_cores(cpu_f, lim), "ram": self.recommend_memory(ram_f, lim)}
        verdict: Verdict | None = None
        decisions: list[Decision] = []
        s_tol = self.s.memory_tolerance
        for resource, current, forecast, free in (
            ("cpu", a.cores, cpu_f, free_cores),
            ("ram", a.memory_mb, ram_f, free_mem),
        ):
            self._remember(track.recs[resource], now, recs[resource])
            target = self._stabilised(track, resource, now, current)
            if target == current or (resource == "ram" and abs(target - current) < current * s_tol):
                continue
            inputs: dict[str, Any] = {
                **forecast,
                "recommendation": recs[resource],
                "stabilised": target,
                "samples": view.sample_summary(),
                "tier": view.tier_inputs(),
                "capacity": capacity,
            }
            needs_verdict = target < current or (resource == "cpu" and bool(cpu_f["saturated"]))
            if (
                verdict is None
                and needs_verdict
                and track.runaway_baseline is None
                and not self._cooling(track, resource, now, target > current)
            ):
                verdict = self.detector.judge(view.vmid, view.samples, now)
            if verdict is not None:
                inputs.update(anomaly=verdict.anomaly, anomaly_score=verdict.score, efficiency=verdict.efficiency)
            d = self._gate(now, host, view.vmid, resource, current, target, inputs, verdict, track, free)
            decisions.append(d)
            if d.action == "set":
                (track.last_up if d.target > current else track.last_down)[resource] = now
        self._clear_runaway(track, verdict, cpu_f)
        return decisions

    def _remember(self, recs: deque[tuple[float, int]], now: float, rec: int) -> None:
        """Keep recommendations back to the longest delay (plus one older entry, proving the span is covered)."""
        recs.append((now, rec))
        horizon = now - max(self.s.upscale_delay_seconds, self.s.downscale_delay_seconds)
        while len(recs) > 2 and recs[1][0] <= horizon:
            recs.popleft()

    def _cooling(self, track: _Track, resource: str, now: float, up: bool) -> bool:
        last = (track.last_up if up else track.last_down).get(resource)
        cooldown = self.s.up_cooldown_seconds if up else self.s.down_cooldown_seconds
        return last is not None and now - last < cooldown

    def _stabilised(self, track: _Track, resource: str, now: float, current: int) -> int:
        """Up: the smallest recommendation over the up delay; down: the largest over the down delay."""
        recs = track.recs[resource]
        newest = recs[-1][1]
        if newest > current:
            span = [r for t, r in recs if t > now - self.s.upscale_delay_seconds - 1e-6]
            lowest = min(span)
            covered = recs[0][0] <= now - self.s.upscale_delay_seconds + 1e-6 or self.s.upscale_delay_seconds == 0
            return max(current, lowest) if covered or lowest > current else current
        span = [r for t, r in recs if t > now - self.s.downscale_delay_seconds - 1e-6]
        covered = recs[0][0] <= now - self.s.downscale_delay_seconds + 1e-6
        highest = max(span)
        if not covered or highest >= current:
            return current
        if resource == "ram" and (current - highest) < current * self.s.memory_tolerance:
            return current
        settled = highest - min(span) <= (1 if resource == "cpu" else highest * self.s.memory_tolerance)
        return highest if settled else current

    def _gate(
        self,
        now: float,
        host: str,
        vmid: str,
        resource: str,
        current: int,
        target: int,
        inputs: dict[str, Any],
        verdict: Verdict | None,
        track: _Track,
        free: int,
    ) -> Decision:
        def make(action: str, value: int, reason: str) -> Decision:
            return Decision(now, host, vmid, resource, action, current, value, reason, inputs)

        up = target > current
        last = (track.last_up if up else track.last_down).get(resource)
        cooldown = self.s.up_cooldown_seconds if up else self.s.down_cooldown_seconds
        if last is not None and now - last < cooldown:
            return make("hold", target, f"cooldown: {now - last:.0f}s of {cooldown:.0f}s since the last change")
        if not up and verdict is not None and verdict.anomaly:
            return make("hold", target, "anomaly: no scale-down while the container behaves unusually")
        runaway = self._runaway(track, verdict, inputs) if up and resource == "cpu" else None
        if runaway == "runaway":
            return make("flag", current, "runaway: CPU pinned without traffic; not feeding it cores")
        if runaway == "suspect":
            return make(
                "hold", target, "suspect runaway: CPU per unit of traffic jumped; waiting for the anomaly model"
            )
        if up and target - current > free:
            if free <= 0:
                refused = make("hold", target, "host capacity: nothing free on the host")
                refused.outcome = "refused_capacity"
                return refused
            inputs["capacity_clamped_from"] = target
            return make("set", current + free, "scale up (clamped to the host's free capacity)")
        return make("set", target, "scale up: forecast above allocation" if up else "scale down: sustained lower usage")

    def _runaway(self, track: _Track, verdict: Verdict | None, inputs: dict[str, Any]) -> str | None:
        """ "runaway" (sticky), "suspect" (held a few cycles for the model to confirm) or None."""
        if track.runaway_baseline is not None:
            return "runaway"
        if verdict is None or not inputs.get("saturated"):
            track.suspect_cycles = 0
            return None
        if verdict.efficiency <= self.s.runaway_factor * max(verdict.baseline_efficiency, 0.05):
            track.suspect_cycles = 0
            return None
        if verdict.anomaly:
            track.runaway_baseline = verdict.baseline_efficiency
            return "runaway"
        track.suspect_cycles += 1
        return "suspect" if track.suspect_cycles <= self.s.runaway_confirm_cycles else None

    def _clear_runaway(self, track: _Track, verdict: Verdict | None, cpu_f: dict[str, float]) -> None:
        """A flagged runaway is cleared once the container is no longer saturated."""
        if track.runaway_baseline is not None and not cpu_f["saturated"]:
            track.runaway_baseline = None
