"""The health prober: one named actor probes every endpoint in the background, cluster-wide.

Replicas hand it what to probe (``configure``: each endpoint's probe URL, the model listing or
Bedrock's ListAsyncInvokes, and the headers its adapter sends, worked out on the replica, since
actors do not know the provider adapters) every few seconds; every replica sends the same list,
the last one wins. The actor runs one loop: each round it probes every target concurrently
(``GET``, no inference; an answer below 500 is up, see ``_probe``), hands the outcomes to the
breaker board (``BreakerBoard.record_health_batch``, which marks endpoints up and down after
runs of equal outcomes, emits ``endpoint_down``/``endpoint_up`` once per transition and feeds
the breakers with every outcome), then sleeps ``interval`` scaled by a random factor in
``[1 - jitter, 1 + jitter]`` so that probes of many gateways do not arrive in step.

A target may carry ``expires_at`` (wall-clock seconds): its headers hold a signature made on the
replica (Bedrock's SigV4), which the service refuses once too old. Replicas re-sign with every
push, so only a prober whose replicas are all gone holds an expired one; it skips such a target
(counted in ``stale``) rather than read the service's 403 as "alive".

Targets that no replica has re-sent for ``STALE_AFTER`` seconds (every replica gone) are
dropped and the loop ends; the next ``configure`` starts it again, also after the actor
restarted. Being one actor, there is one prober per cluster however many replicas run.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

import httpx

from actors.llm_gateway.breaker import BreakerBoard
from rayfleet.logs import get_logger, register_secret
from rayfleet.state import ActorHandle, call

log = get_logger("llm_gateway")

STALE_AFTER = 60.0
MAX_PARALLEL = 16


class ProbeTarget(TypedDict):
    """One endpoint to probe: its name (the breaker's), the URL and the headers (its key)."""

    name: str
    url: str
    headers: dict[str, str]
    expires_at: NotRequired[float]  # the headers are a signature, refused after this time (time.time())


# a signature changes with every push: not a secret to keep out of logs (a set that would only grow)
SIGNED_PER_PUSH = frozenset({"authorization", "x-amz-date"})


class ProbeSettings(TypedDict):
    interval: float
    jitter: float
    timeout: float


class EndpointProber:
    """The actor. ``breakers`` is the breaker board's handle; ``rng`` and ``clock`` are for tests."""

    def __init__(
        self,
        breakers: ActorHandle[BreakerBoard],
        rng: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._breakers = breakers
        self._rng, self._clock = rng, clock
        self._targets: list[ProbeTarget] = []
        self._settings: ProbeSettings = {"interval": 30.0, "jitter": 0.2, "timeout": 5.0}
        self._pushed_at = 0.0
        self._loop: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stats: dict[str, Any] = {"rounds": 0, "probes": 0, "failures": 0, "stale": 0, "last_delay": None}

    async def configure(self, targets: list[ProbeTarget], settings: ProbeSettings) -> dict[str, Any]:
        """Replace the targets and settings; starts the loop if it is not running."""
        for target in targets:
            signed = "expires_at" in target
            for name, value in target["headers"].items():
                if not (signed and name.lower() in SIGNED_PER_PUSH):
                    register_secret(value)
        changed = settings != self._settings
        self._targets, self._settings, self._pushed_at = list(targets), settings, self._clock()
        if self._loop is None or self._loop.done():
            self._loop = asyncio.get_running_loop().create_task(self._run())
        elif changed:
            self._wake.set()  # a new interval applies now, not after the old sleep
        return self.status()

    async def stop(self) -> dict[str, Any]:
        """Forget the targets and end the loop now (a replica's next ``configure`` starts it again): an
        upstream that leaves the gateway's configuration is not probed for another minute."""
        self._targets = []
        if self._loop is not None and not self._loop.done():
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
        return self.status()

    def status(self) -> dict[str, Any]:
        return {
            "targets": sorted(t["name"] for t in self._targets),
            "running": self._loop is not None and not self._loop.done(),
            **self._settings,
            **self._stats,
        }

    def delay(self) -> float:
        """The next sleep: ``interval`` times a factor drawn uniformly from ``[1 - jitter, 1 + jitter]``."""
        s = self._settings
        return s["interval"] * (1.0 + s["jitter"] * (2.0 * self._rng() - 1.0))

    async def _run(self) -> None:
        while self._targets and self._clock() - self._pushed_at < STALE_AFTER + self._settings["interval"]:
            try:
                await self.probe_round()
            except Exception as exc:  # the breaker board unreachable: try again next round
                log.warning("health probe round failed", extra={"error": type(exc).__name__})
            delay = self.delay()
            self._stats["last_delay"] = delay
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), delay)
            except TimeoutError:
                pass
        self._targets = []

    async def probe_round(self) -> list[tuple[str, bool, str]]:
        """Probe every target once, concurrently; hand the outcomes to the breaker board."""
        now = time.time()
        targets = [t for t in self._targets if t.get("expires_at", now) >= now]
        self._stats["stale"] += len(self._targets) - len(targets)
        timeout = self._settings["timeout"]
        gate = asyncio.Semaphore(MAX_PARALLEL)
        async with httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False) as client:

            async def one(target: ProbeTarget) -> tuple[str, bool, str]:
                async with gate:
                    ok, reason = await _probe(client, target, timeout)
                return target["name"], ok, reason

            outcomes = list(await asyncio.gather(*(one(t) for t in targets)))
        self._stats["rounds"] += 1
        self._stats["probes"] += len(outcomes)
        self._stats["failures"] += sum(1 for _, ok, _ in outcomes if not ok)
        if outcomes:
            await call(self._breakers, BreakerBoard.record_health_batch, outcomes)
        return outcomes


async def _probe(client: httpx.AsyncClient, target: ProbeTarget, timeout: float) -> tuple[bool, str]:
    """(up, why not): any answer below 500 is up (a server without a model listing answers 404, one
    that refuses the key 401: both are alive, and a probe must not open the breaker of a server that
    serves); a 5xx, a refused connection or no answer is down. The reason never holds the URL or a key."""
    try:
        response = await client.get(target["url"], headers=target["headers"])
    except httpx.TimeoutException:
        return False, f"no answer within {timeout:g} s"
    except httpx.HTTPError as exc:
        return False, f"connection failed ({type(exc).__name__})"
    if response.status_code < 500:
        return True, ""
    return False, f"HTTP {response.status_code}"
