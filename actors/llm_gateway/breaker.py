"""Per-endpoint circuit breakers (spec 001 §3).

CLOSED -> OPEN after ``failure_threshold`` consecutive failures (event ``circuit_open``);
OPEN -> HALF once ``recovery_timeout`` has elapsed and a caller *acquires* the probe;
HALF -> CLOSED when the probe succeeds (event ``endpoint_recovered``), HALF -> OPEN when
it fails. Reset sends any state to CLOSED.

``peek`` is read-only: routing and ``/health`` use it and it never hands out the probe.
``acquire_probe`` hands out exactly one probe token per HALF period; the token expires
after ``probe_timeout`` so a lost probe does not wedge the breaker.

``record_health`` takes the outcome of a health probe (the prober actor's, or an operator's
``/registry/{id}/probe``). The up/down mark has hysteresis: ``unhealthy_threshold`` failed probes
in a row mark an endpoint ``down`` (event ``endpoint_down``), then ``healthy_threshold``
successful ones in a row mark it ``up`` again (event ``endpoint_up``); an endpoint that
alternates stays where it is and fires nothing. A first success marks an endpoint of unknown
health ``up`` (no event: nothing was down). Every probe, whatever the mark, also feeds the
breaker: a failed probe counts as a failure while CLOSED; once the recovery time has passed, the
probe takes the half-open probe itself, so an OPEN breaker closes (or re-opens) without waiting
for a client request to try it.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

from actors.llm_gateway.changes import HOLD_SECONDS, Changes, instance_base
from rayfleet.state import unlocked

CLOSED, OPEN, HALF = "CLOSED", "OPEN", "HALF"
UP, DOWN, UNKNOWN = "up", "down", "unknown"
UNHEALTHY_THRESHOLD, HEALTHY_THRESHOLD = 2, 2  # the defaults of ``health_check``


class BreakerView(TypedDict):
    """One endpoint's breaker as replicas see it."""

    state: str  # CLOSED, OPEN or HALF
    failures: int
    failure_threshold: int
    opened_at: float | None
    retry_at: float | None
    probe_out: bool
    health: str  # up, down or unknown (no health probe yet)


class BreakerSnapshot(TypedDict):
    version: int
    taken_at: float
    breakers: dict[str, BreakerView]


class BreakerEvent(TypedDict):
    """``circuit_open``, ``endpoint_recovered``, ``endpoint_down`` or ``endpoint_up``, numbered by the board."""

    seq: int
    event: str
    endpoint: str
    timestamp: float
    reason: str  # why a health probe failed (``endpoint_down``); empty otherwise


@dataclass
class CircuitBreaker:
    failure_threshold: int = 5
    recovery_timeout: float = 60.0
    probe_timeout: float = 30.0
    state: str = CLOSED
    failures: int = 0
    opened_at: float = 0.0
    probe_token: str | None = None
    probe_deadline: float = 0.0
    events: list[str] = field(default_factory=list)
    health: str = UNKNOWN
    probe_fails: int = 0  # health probes failed in a row
    probe_oks: int = 0  # health probes succeeded in a row

    def mark_health(self, ok: bool, unhealthy_threshold: int, healthy_threshold: int) -> None:
        """Count one health probe; move the mark (and queue its event) once a run reaches its threshold."""
        self.probe_oks, self.probe_fails = (self.probe_oks + 1, 0) if ok else (0, self.probe_fails + 1)
        if self.health != DOWN and self.probe_fails >= unhealthy_threshold:
            self.health = DOWN
            self.events.append("endpoint_down")
        elif self.health == DOWN and self.probe_oks >= healthy_threshold:
            self.health = UP
            self.events.append("endpoint_up")
        elif self.health == UNKNOWN and ok:
            self.health = UP

    def peek(self, now: float) -> str:
        """Effective state without side effects: OPEN reads as HALF once recovery elapsed."""
        if self.state == OPEN and now - self.opened_at >= self.recovery_timeout:
            return HALF
        return self.state

    def probe_available(self, now: float) -> bool:
        state = self.peek(now)
        if state != HALF:
            return False
        return self.probe_token is None or now >= self.probe_deadline

    def acquire_probe(self, now: float, token: str) -> bool:
        if not self.probe_available(now):
            return False
        self.state = HALF
        self.probe_token = token
        self.probe_deadline = now + self.probe_timeout
        return True

    def record(self, ok: bool, now: float, token: str | None = None) -> None:
        """Apply one outcome; outcomes of non-probe requests are ignored outside CLOSED."""
        if self.state == CLOSED:
            if ok:
                self.failures = 0
                return
            self.failures += 1
            if self.failures >= self.failure_threshold:
                self._open(now)
                self.events.append("circuit_open")
            return
        if self.state == HALF and token is not None and token == self.probe_token:
            self.probe_token = None
            if ok:
                self.state, self.failures = CLOSED, 0
                self.events.append("endpoint_recovered")
            else:
                self._open(now)

    def reset(self) -> None:
        self.state, self.failures, self.probe_token, self.opened_at = CLOSED, 0, None, 0.0

    def _open(self, now: float) -> None:
        self.state = OPEN
        self.opened_at = now
        self.probe_token = None

    def view(self, now: float) -> BreakerView:
        return {
            "state": self.peek(now),
            "failures": self.failures,
            "failure_threshold": self.failure_threshold,
            "opened_at": self.opened_at or None,
            "retry_at": (self.opened_at + self.recovery_timeout) if self.state != CLOSED else None,
            "probe_out": self.probe_token is not None and now < self.probe_deadline,
            "health": self.health,
        }


class BreakerBoard:
    """The actor: every endpoint's breaker, a versioned snapshot, and an event log."""

    def __init__(
        self,
        failure_threshold: int = 5,
        recovery_timeout: float = 60.0,
        probe_timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
        unhealthy_threshold: int = UNHEALTHY_THRESHOLD,
        healthy_threshold: int = HEALTHY_THRESHOLD,
    ) -> None:
        self._config = (failure_threshold, recovery_timeout, probe_timeout)
        self._clock = clock
        self._breakers: dict[str, CircuitBreaker] = {}
        self._version = instance_base()  # a restarted board never answers a replica's old version as current
        self._changes = Changes()
        self._tokens = itertools.count(1)
        self._events: deque[BreakerEvent] = deque(maxlen=1000)
        self._seq = 0
        self._health_thresholds = (unhealthy_threshold, healthy_threshold)
        self.configure_health(unhealthy_threshold, healthy_threshold)  # kept by an actor restart, like the rest

    def configure(self, failure_threshold: int, recovery_timeout: float, probe_timeout: float) -> None:
        """Apply config to the board and every existing breaker (also used on redeploy)."""
        self._config = (failure_threshold, recovery_timeout, probe_timeout)
        for br in self._breakers.values():
            br.failure_threshold, br.recovery_timeout, br.probe_timeout = self._config
        self._bump()

    def _bump(self) -> None:
        self._version += 1
        self._changes.notify()

    def configure_health(self, unhealthy_threshold: int, healthy_threshold: int) -> None:
        """How many failed (successful) health probes in a row mark an endpoint down (up)."""
        if unhealthy_threshold < 1 or healthy_threshold < 1:
            raise ValueError("health thresholds must be at least 1")
        self._health_thresholds = (unhealthy_threshold, healthy_threshold)

    def _get(self, endpoint: str) -> CircuitBreaker:
        br = self._breakers.get(endpoint)
        if br is None:
            threshold, recovery, probe = self._config
            br = self._breakers[endpoint] = CircuitBreaker(threshold, recovery, probe)
        return br

    def _drain(self, endpoint: str, br: CircuitBreaker, reason: str = "") -> None:
        for name in br.events:
            self._seq += 1
            why = reason if name == "endpoint_down" else ""
            self._events.append(
                {"seq": self._seq, "event": name, "endpoint": endpoint, "timestamp": self._clock(), "reason": why}
            )
        br.events.clear()

    def snapshot(self, since_version: int = -1) -> BreakerSnapshot | None:
        """All breakers' views with the version; ``None`` when nothing changed since."""
        if since_version == self._version:
            return None
        now = self._clock()
        return {
            "version": self._version,
            "taken_at": now,
            "breakers": {name: br.view(now) for name, br in self._breakers.items()},
        }

    @unlocked
    async def wait_snapshot(self, since_version: int = -1, timeout: float = HOLD_SECONDS) -> BreakerSnapshot | None:
        """``snapshot(since_version)``, the call held up to ``timeout`` s while nothing changed (a long-poll).

        Every event of ``events`` comes with a version change, so a replica reads them after this answers."""
        await self._changes.wait(lambda: self._version == since_version, timeout)
        return self.snapshot(since_version)

    def peek(self, endpoint: str) -> BreakerView:
        return self._get(endpoint).view(self._clock())

    def acquire_probe(self, endpoint: str) -> str | None:
        br = self._get(endpoint)
        token = f"probe-{next(self._tokens)}"
        if br.acquire_probe(self._clock(), token):
            self._bump()
            return token
        return None

    def record(self, endpoint: str, ok: bool, token: str | None = None) -> BreakerView:
        br = self._get(endpoint)
        before = (br.state, br.failures)
        br.record(ok, self._clock(), token)
        if (br.state, br.failures) != before:
            self._bump()
        self._drain(endpoint, br)
        return br.view(self._clock())

    def record_batch(self, outcomes: list[tuple[str, bool]]) -> int:
        for endpoint, ok in outcomes:
            self.record(endpoint, ok)
        return self._version

    def record_health(self, endpoint: str, ok: bool, reason: str = "") -> BreakerView:
        """A health probe's outcome: the up/down mark (an event per transition) and the breaker fed."""
        br, now = self._get(endpoint), self._clock()
        before = (br.state, br.failures, br.health)
        br.mark_health(ok, *self._health_thresholds)
        token = f"probe-{next(self._tokens)}"
        if br.state == CLOSED:
            br.record(ok, now)
        elif br.acquire_probe(now, token):
            br.record(ok, now, token)
        if (br.state, br.failures, br.health) != before:
            self._bump()
        self._drain(endpoint, br, reason)
        return br.view(now)

    def record_health_batch(self, outcomes: list[tuple[str, bool, str]]) -> int:
        for endpoint, ok, reason in outcomes:
            self.record_health(endpoint, ok, reason)
        return self._version

    def reset(self, endpoint: str) -> BreakerView:
        br = self._get(endpoint)
        br.reset()
        self._bump()
        return br.view(self._clock())

    def events(self, since_seq: int = 0) -> list[BreakerEvent]:
        return [e for e in self._events if e["seq"] > since_seq]
