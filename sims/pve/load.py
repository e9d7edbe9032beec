"""Simulated load: per-container demand curves that respond to the allocation.

Each container with a curve has a CPU demand (cores) and a memory demand (MB)
as functions of simulated time. What the container *gets* depends on its
configuration: CPU used is ``min(demand, cores)`` (so CPU% is demand over
cores, capped at 100), and memory demand beyond ``memory + swap`` is an OOM:
the kernel kills the biggest process (a leaking process restarts from its base
footprint) and the container's ``memory.events`` counts the kill.

The guest reads the outcome through the files a real container has:
``/proc/stat`` (cumulative jiffies, one ``cpuN`` line per core),
``/proc/meminfo``, ``/proc/diskstats``, ``/proc/net/dev`` and
``/sys/fs/cgroup/memory.events``. Counters are integrated in steps of at most
`STEP` simulated seconds between reads, with the allocation in force; `pct set`
advances a container before changing it, so each interval is charged at the
allocation that really applied.

Ground truth for benchmarks (seconds above 90 % CPU, seconds at OOM, core- and
MB-seconds allocated) is accumulated alongside and read with `stats()`.

Configuration (``load.json`` or ``load.yaml`` in the state directory, reloaded
when it changes)::

    {"speed": 60, "seed": 7,
     "containers": {"101": {"kind": "daily", "cpu": 0.5, "amplitude": 2.0, "mem": 300}}}

Kinds: ``steady``, ``daily`` (peak at ``peak_hour``), ``spikes`` (seeded bursts),
``runaway`` (a process that burns ``runaway_cores`` from ``runaway_at_h`` on),
``leak`` (memory grows ``leak_mb_per_h`` until the OOM killer restarts it) and
``replay`` (``points``: ``[[seconds, cores, mb], ...]`` over a day, interpolated).
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from .model import Config, Container

DAY = 86_400.0
STEP = 10.0
USER_HZ = 100
KINDS = ("steady", "daily", "spikes", "runaway", "leak", "replay")
SLO_CPU_PCT = 90.0


def _unit(*parts: int) -> float:
    """A deterministic pseudo-random number in [0, 1) from integers (splitmix64)."""
    x = 0x9E3779B97F4A7C15
    for part in parts:
        x = (x ^ (part & 0xFFFFFFFFFFFFFFFF)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        x = (x ^ (x >> 31)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return (x >> 11) / float(1 << 53)


@dataclass
class Curve:
    """A container's demand. Times are simulated seconds since the start of the run."""

    kind: str = "steady"
    cpu: float = 0.3
    mem: float = 200.0
    amplitude: float = 0.0
    mem_amplitude: float = 0.0
    peak_hour: float = 14.0
    noise: float = 0.05
    spikes_per_hour: float = 0.5
    spike_minutes: float = 12.0
    spike_cores: float = 2.0
    runaway_at_h: float = 10.0
    runaway_cores: float = 64.0
    leak_mb_per_h: float = 60.0
    points: list[list[float]] = field(default_factory=list)
    seed: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any], seed: int = 0) -> Curve:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown curve fields: {sorted(unknown)}")
        curve = cls(**{"seed": seed, **data})
        if curve.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        if curve.kind == "replay" and len(curve.points) < 2:
            raise ValueError("a replay curve needs at least two points [seconds, cores, mb]")
        return curve

    def _noise(self, vmid: int, t: float) -> float:
        return 1.0 + self.noise * (2.0 * _unit(self.seed, vmid, int(t // 60)) - 1.0)

    def _daily(self, t: float) -> float:
        """0 at night, 1 at `peak_hour`: a raised cosine over the day."""
        phase = 2 * math.pi * ((t % DAY) / 3600.0 - self.peak_hour) / 24.0
        return (1 + math.cos(phase)) / 2

    def _spike(self, vmid: int, t: float) -> bool:
        hour = int(t // 3600)
        if _unit(self.seed, vmid, hour, 1) >= self.spikes_per_hour:
            return False
        start = hour * 3600 + _unit(self.seed, vmid, hour, 2) * (3600 - self.spike_minutes * 60)
        return start <= t < start + self.spike_minutes * 60

    def _replay(self, t: float) -> tuple[float, float]:
        pts = sorted(self.points)
        x = t % DAY
        for (t0, c0, m0), (t1, c1, m1) in itertools.pairwise(pts):
            if t0 <= x <= t1:
                w = 0.0 if t1 == t0 else (x - t0) / (t1 - t0)
                return c0 + w * (c1 - c0), m0 + w * (m1 - m0)
        _, c, m = pts[-1] if x > pts[-1][0] else pts[0]
        return c, m

    def demand(self, vmid: int, t: float, leak_origin: float) -> tuple[float, float, float]:
        """(useful CPU cores, runaway CPU cores, memory MB) at time `t`."""
        noise = self._noise(vmid, t)
        cpu, mem, burn = self.cpu, self.mem, 0.0
        if self.kind == "replay":
            cpu, mem = self._replay(t)
        if self.kind == "daily":
            daily = self._daily(t)
            cpu += self.amplitude * daily
            mem += self.mem_amplitude * daily
        if self.kind == "spikes" and self._spike(vmid, t):
            cpu += self.spike_cores
            mem += self.mem_amplitude
        if self.kind == "runaway" and t >= self.runaway_at_h * 3600:
            burn = self.runaway_cores
        if self.kind == "leak":
            mem += self.leak_mb_per_h * max(0.0, t - leak_origin) / 3600.0
        return max(0.0, cpu * noise), burn, max(1.0, mem * (1.0 + (noise - 1.0) / 4))


@dataclass
class Meter:
    """Cumulative counters and ground truth of one container."""

    t: float
    user: float = 0.0
    idle: float = 0.0
    io_sectors_read: float = 0.0
    io_sectors_written: float = 0.0
    rx_bytes: float = 0.0
    tx_bytes: float = 0.0
    oom_kills: int = 0
    leak_origin: float = 0.0
    mem_used: float = 0.0
    swap_used: float = 0.0
    over_slo_s: float = 0.0
    oom_s: float = 0.0
    violation_s: float = 0.0
    core_s: float = 0.0
    mb_s: float = 0.0


class ManualClock:
    """Simulated time set by the caller (benchmarks, tests)."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class LiveClock:
    """Simulated time running `speed` times faster than the wall clock."""

    def __init__(self, speed: float = 1.0, start: float = 0.0) -> None:
        self.speed = speed
        self.start = start
        self.t0 = time.time()

    def __call__(self) -> float:
        return self.start + (time.time() - self.t0) * self.speed


class LoadModel:
    """Demand curves for some containers of one node, and their integrated counters."""

    def __init__(self, curves: dict[str, Curve], clock: Callable[[], float]) -> None:
        self.curves = curves
        self.clock = clock
        self.meters: dict[str, Meter] = {}
        self.default = Curve(kind="steady", cpu=0.02, mem=48.0, noise=0.0)

    def has(self, vmid: str) -> bool:
        return vmid in self.curves

    def set_curve(self, vmid: str, curve: Curve) -> None:
        self.curves[vmid] = curve

    def _meter(self, vmid: str, now: float) -> Meter:
        meter = self.meters.get(vmid)
        if meter is None:
            meter = self.meters[vmid] = Meter(t=now, leak_origin=now)
        return meter

    def advance(self, vmid: str, config: Config, running: bool = True) -> Meter:
        """Integrate `vmid` up to now with the allocation in `config`."""
        now = self.clock()
        meter = self._meter(vmid, now)
        curve = self.curves.get(vmid, self.default)
        cores = max(1, int(config.get("cores", 1) or 1))
        memory = float(config.get("memory", 512) or 512)
        swap = float(config.get("swap", 0) or 0)
        while meter.t < now:
            dt = min(STEP, now - meter.t)
            if running:
                self._step(meter, curve, int(vmid), cores, memory, swap, dt)
            meter.t += dt
        return meter

    def _step(self, m: Meter, curve: Curve, vmid: int, cores: int, memory: float, swap: float, dt: float) -> None:
        useful, burn, mem = curve.demand(vmid, m.t, m.leak_origin)
        used = min(useful + burn, cores)
        m.user += used * dt * USER_HZ
        m.idle += (cores - used) * dt * USER_HZ
        served = min(useful, max(0.0, cores - burn)) if burn else min(useful, cores)
        m.io_sectors_read += served * 400 * dt
        m.io_sectors_written += served * 150 * dt
        m.rx_bytes += served * 2_000_000 * dt
        m.tx_bytes += served * 6_000_000 * dt
        m.core_s += cores * dt
        m.mb_s += memory * dt
        over = 100.0 * (useful + burn) / cores > SLO_CPU_PCT
        oom = mem > memory + swap
        if over:
            m.over_slo_s += dt
        if over or oom:
            m.violation_s += dt
        if oom:
            m.oom_kills += 1
            m.oom_s += dt
            if curve.kind == "leak":
                m.leak_origin = m.t + dt
            m.mem_used, m.swap_used = memory, swap
        else:
            m.mem_used, m.swap_used = min(mem, memory), max(0.0, mem - memory)

    def stats(self, vmid: str) -> dict[str, float]:
        m = self.meters.get(vmid)
        keys = ("over_slo_s", "oom_s", "violation_s", "core_s", "mb_s", "oom_kills")
        return {k: float(getattr(m, k)) if m is not None else 0.0 for k in keys}

    # ----------------------------------------------------------------- files
    def file(self, vmid: str, ct: Container, path: str) -> str | None:
        """The content of a load-driven /proc or cgroup file, or None when not one of them."""
        render = FILES.get(path)
        if render is None:
            return None
        meter = self.advance(vmid, ct["config"], ct.get("status") == "running")
        return render(meter, ct["config"])


def _proc_stat(m: Meter, config: Config) -> str:
    cores = max(1, int(config.get("cores", 1) or 1))
    user, idle = int(m.user), int(m.idle)
    lines = [f"cpu  {user} 0 0 {idle} 0 0 0 0 0 0"]
    for i in range(cores):
        lines.append(f"cpu{i} {user // cores} 0 0 {idle // cores} 0 0 0 0 0 0")
    lines.append(f"ctxt {user * 7}\nbtime {int(time.time() - m.t)}\nprocesses {1000 + user // 500}")
    return "\n".join(lines) + "\n"


def _meminfo(m: Meter, config: Config) -> str:
    total = int(float(config.get("memory", 512)) * 1024)
    swap = int(float(config.get("swap", 0) or 0) * 1024)
    used = int(m.mem_used * 1024)
    swap_used = int(m.swap_used * 1024)
    return (
        f"MemTotal:       {total:>8} kB\nMemFree:        {max(0, total - used):>8} kB\n"
        f"MemAvailable:   {max(0, total - used):>8} kB\nBuffers:               0 kB\nCached:                0 kB\n"
        f"SwapTotal:      {swap:>8} kB\nSwapFree:       {max(0, swap - swap_used):>8} kB\n"
    )


def _diskstats(m: Meter, config: Config) -> str:
    r, w = int(m.io_sectors_read), int(m.io_sectors_written)
    return f"   8       0 sda {r // 8} 0 {r} 0 {w // 8} 0 {w} 0 0 0 0 0 0 0 0 0 0\n"


def _net_dev(m: Meter, config: Config) -> str:
    rx, tx = int(m.rx_bytes), int(m.tx_bytes)
    return (
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
        "    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\n"
        f"  eth0: {rx} {rx // 1200} 0 0 0 0 0 0 {tx} {tx // 1200} 0 0 0 0 0 0\n"
    )


def _memory_events(m: Meter, config: Config) -> str:
    return f"low 0\nhigh 0\nmax {m.oom_kills}\noom {m.oom_kills}\noom_kill {m.oom_kills}\n"


FILES: dict[str, Callable[[Meter, Config], str]] = {
    "/proc/stat": _proc_stat,
    "/proc/meminfo": _meminfo,
    "/proc/diskstats": _diskstats,
    "/proc/net/dev": _net_dev,
    "/sys/fs/cgroup/memory.events": _memory_events,
}


class LoadFile:
    """`load.json`/`load.yaml` in a state directory, re-read when it changes."""

    def __init__(self, state_dir: Path) -> None:
        self.paths = [state_dir / "load.json", state_dir / "load.yaml"]
        self.model: LoadModel | None = None
        self._stamp: tuple[str, float] | None = None

    def current(self) -> LoadModel | None:
        path = next((p for p in self.paths if p.exists()), None)
        if path is None:
            return self.model
        stamp = (str(path), path.stat().st_mtime)
        if stamp != self._stamp:
            self._stamp = stamp
            self.model = load_from(path, self.model)
        return self.model


def parse_load(data: dict[str, Any]) -> tuple[dict[str, Curve], float, float]:
    """(curves, speed, start) from a load document."""
    seed = int(data.get("seed", 0))
    curves = {str(int(k)): Curve.from_dict(v, seed) for k, v in (data.get("containers") or {}).items()}
    return curves, float(data.get("speed", 1.0)), float(data.get("start", 0.0))


def load_from(path: Path, previous: LoadModel | None = None) -> LoadModel:
    text = path.read_text()
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    curves, speed, start = parse_load(data or {})
    if previous is not None:
        previous.curves = curves
        return previous
    return LoadModel(curves, LiveClock(speed, start))
