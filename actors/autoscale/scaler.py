"""The scaling-model actor: reads the monitors' history, decides with `ForecastPolicy`, applies through the API.

Each cycle: the allocation of every sampled container comes from
`GET /resource/lxc/config` (as the spec's ML service does), the policy decides,
and `set` decisions go to `POST /scale/cores` / `POST /scale/ram` with the API
key, so the API's metrics count them. A container whose allocation cannot be
read is counted in `autoscale_api_scaling_failures_total` (reason
`unknown_allocation`) instead of being skipped silently. Every decision is
kept (bounded) with its inputs.
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import Any

import httpx

from rayfleet.logs import get_logger
from rayfleet.metrics import Metrics
from rayfleet.state import ActorHandle, call
from rayfleet.tasks import BackgroundTasks

from .monitor import MonitorActor
from .policy import Allocation, ContainerView, Decision, ForecastPolicy, HostView, Limits, ModelSettings
from .sampling import Sample

log = get_logger("autoscale")
PATHS = {"cpu": ("/scale/cores", "cores"), "ram": ("/scale/ram", "memory")}


class ScalerActor:
    def __init__(
        self,
        monitors: dict[str, ActorHandle[MonitorActor]],
        capacity: dict[str, tuple[int, int]],
        api_url: str,
        api_key_env: str,
        interval: float = 10.0,
        dry_run: bool = False,
        limits: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
        ignore: list[str] | None = None,
        timeout: float = 5.0,
        decisions_kept: int = 2000,
    ) -> None:
        self.monitors = monitors
        self.capacity = capacity
        self.api_url = api_url.rstrip("/")
        self.api_key_env = api_key_env
        self.interval = interval
        self.dry_run = dry_run
        self.limits = Limits(**(limits or {}))
        self.policy = ForecastPolicy(ModelSettings(**(settings or {})))
        self.ignore = set(ignore or [])
        self.timeout = timeout
        self.decisions: deque[dict[str, Any]] = deque(maxlen=decisions_kept)
        self.cycles = 0
        metrics = Metrics("autoscale")
        self.failures = metrics.counter(
            "autoscale_api_scaling_failures_total",
            "Scaling actions that failed",
            ("container_id", "resource", "reason"),
        )
        self._tasks = BackgroundTasks("autoscale")
        self._started = False

    def _client(self) -> httpx.AsyncClient:
        key = os.environ.get(self.api_key_env, "").split(",")[0].strip()
        return httpx.AsyncClient(base_url=self.api_url, headers={"X-API-Key": key}, timeout=self.timeout)

    async def start(self) -> bool:
        if not self._started:
            self._started = True
            self._tasks.every(self.interval, self.cycle, name="scaler")
        return True

    async def _allocation(self, client: httpx.AsyncClient, vmid: str) -> Allocation | None:
        try:
            response = await client.get("/resource/lxc/config", params={"lxc_id": vmid})
            data = response.json().get("data") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            data = None
        if not data or data.get("cores") is None or data.get("memory_mb") is None:
            self.failures.labels(container_id=vmid, resource="cpu", reason="unknown_allocation").inc()
            return None
        return Allocation(int(data["cores"]), int(data["memory_mb"]))

    async def _views(self, client: httpx.AsyncClient) -> list[HostView]:
        views = []
        for host, monitor in self.monitors.items():
            histories = await call(monitor, MonitorActor.histories)
            containers = {}
            for vmid, rows in histories.items():
                if vmid in self.ignore or len(rows) < 2:
                    continue
                alloc = await self._allocation(client, vmid)
                if alloc is not None:
                    samples = [Sample(**r) for r in rows]
                    containers[vmid] = ContainerView(vmid, alloc, samples, self.limits)
            cores, memory = self.capacity[host]
            views.append(HostView(host, cores, memory, containers))
        return views

    async def _apply(self, client: httpx.AsyncClient, d: Decision) -> None:
        path, field = PATHS[d.resource]
        try:
            response = await client.post(path, json={"lxc_id": d.vmid, field: d.target})
            d.applied = response.status_code == 200
            if not d.applied:
                d.error = f"{response.status_code}: {response.text[:200]}"
        except httpx.HTTPError as exc:
            d.error = f"{type(exc).__name__}: {exc}"

    async def cycle(self) -> int:
        """One decision round; the number of decisions logged."""
        async with self._client() as client:
            views = await self._views(client)
            decisions = self.policy.decide(time.time(), views)
            for d in decisions:
                d.dry_run = self.dry_run
                if d.action == "set" and not self.dry_run:
                    await self._apply(client, d)
                self.decisions.append(d.as_dict())
                log.info("scaling decision", extra={"decision": d.as_dict()})
        self.cycles += 1
        return len(decisions)

    async def recent(self, limit: int = 100) -> list[dict[str, Any]]:
        return list(self.decisions)[-limit:]

    async def status(self) -> dict[str, Any]:
        return {"cycles": self.cycles, "dry_run": self.dry_run, "decisions": len(self.decisions)}

    async def stop(self) -> None:
        await self._tasks.stop()
