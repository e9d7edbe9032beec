"""Watching the fleet under Ray's cluster autoscaler: nodes, replicas and answers over time.

`rayfleet up --autoscale` writes the live nodes and Serve's placement to its state file
every 2 s (`rayfleet.cli`). :class:`Watch` samples that file into a timeline while
:class:`Load` sends requests and counts the answers, per phase (``"idle"``, ``"load"``,
``"cooldown"``...), so a test or a notebook can show the worker node arrive, replicas
land on it, and the node go away with no answer lost. Loopback and this machine's own
addresses only (the fake provider's nodes).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rayfleet import upstate


@dataclass
class Sample:
    """One look at the cluster: seconds since the watch began, and what ran then."""

    t: float
    phase: str
    nodes: int
    workers: int
    replicas: int
    replica_ips: list[str]
    ok: int
    failed: int


class Load:
    """``clients`` threads posting ``body`` to ``url`` back to back; answers counted per phase."""

    def __init__(self, url: str, clients: int, body: dict[str, Any] | None = None, timeout: float = 10.0) -> None:
        self.url, self.clients, self.body, self.timeout = url, clients, body or {"features": ["python"]}, timeout
        self.phase = "idle"
        self.ok: dict[str, int] = {}
        self.failed: dict[str, int] = {}
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> Load:
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(self.clients)]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.timeout + 5)

    def totals(self) -> tuple[int, int]:
        with self._lock:
            return sum(self.ok.values()), sum(self.failed.values())

    def _run(self) -> None:
        with httpx.Client(timeout=self.timeout, trust_env=False) as client:
            while not self._stop.is_set():
                phase, error = self.phase, ""
                try:
                    response = client.post(self.url, json=self.body)
                    good = response.status_code == 200
                    error = "" if good else f"HTTP {response.status_code}"
                except httpx.HTTPError as exc:
                    good, error = False, f"{type(exc).__name__}: {exc}"
                with self._lock:
                    counts = self.ok if good else self.failed
                    counts[phase] = counts.get(phase, 0) + 1
                    if error and len(self.errors) < 20:
                        self.errors.append(f"{phase}: {error}")


@dataclass
class Watch:
    """Samples `rayfleet up`'s state file every ``interval`` seconds (in a thread) into ``samples``."""

    state_file: Path
    app: str
    loads: list[Load] = field(default_factory=list)
    interval: float = 1.0
    phase: str = "idle"
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Watch:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sampling, with one last look (the timeline ends with what holds now)."""
        self._stop.set()
        self._thread.join(timeout=10)
        self.samples.append(self.sample())

    def set_phase(self, phase: str) -> None:
        """From now on, samples and answers count under ``phase``."""
        self.phase = phase
        for load in self.loads:
            load.phase = phase

    def state(self) -> dict[str, Any]:
        """The state file with a snapshot `up` took for this look (`rayfleet.upstate.fresh`); {} while there
        is none (or it is being replaced: the next look sees it)."""
        return upstate.fresh(self.state_file.parent) or {}

    def sample(self) -> Sample:
        state = self.state()
        nodes = state.get("nodes") or []
        placed = (state.get("serve") or {}).get(self.app) or {}
        ok = failed = 0
        for load in self.loads:
            good, bad = load.totals()
            ok, failed = ok + good, failed + bad
        return Sample(
            round(time.monotonic() - self._start, 1),
            self.phase,
            len(nodes),
            sum(1 for n in nodes if n.get("worker")),
            int(placed.get("replicas") or 0),
            list(placed.get("nodes") or []),
            ok,
            failed,
        )

    def wait(self, what: str, check: Callable[[Sample], bool], timeout: float) -> Sample:
        """Look every ``interval`` until ``check`` holds for a fresh sample; TimeoutError naming ``what``."""
        deadline = time.monotonic() + timeout
        while not check(last := self.sample()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not happen within {timeout:g}s (last look: {last})")
            time.sleep(self.interval)
        return last

    def worker_ips(self) -> list[str]:
        return sorted({n["ip"] for n in self.state().get("nodes") or [] if n.get("worker")})

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.samples.append(self.sample())

    def table(self, every: float = 10.0) -> str:
        """The timeline, a row per ``every`` seconds and one at each change of phase or node count."""
        rows = ["   t/s  phase      nodes  workers  replicas  answered  failed  replica nodes"]
        last: Sample | None = None
        for s in self.samples:
            if (
                last is None
                or s.t - last.t >= every
                or (s.phase, s.nodes, s.replicas)
                != (
                    last.phase,
                    last.nodes,
                    last.replicas,
                )
            ):
                rows.append(
                    f"{s.t:6.1f}  {s.phase:<9} {s.nodes:5d}  {s.workers:7d}  {s.replicas:8d}  {s.ok:8d}  "
                    f"{s.failed:6d}  {','.join(s.replica_ips)}"
                )
                last = s
        return "\n".join(rows)
