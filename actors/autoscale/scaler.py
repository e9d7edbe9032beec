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

from .decisions import DecisionLog
from .monitor import MonitorActor
from .policy import Allocation, ContainerView, Decision, ForecastPolicy, HostView, Limits, ModelSettings
from .sampling import Sample

log = get_logger("autoscale")
PATHS = {"cpu": ("/scale/cores", "cores"), "ram": ("/scale/ram", "memory")}
TIMELINE_FIELDS = ("t", "cores", "cpu_cores_used", "cpu_pct", "memory_mb", "memory_used_mb")


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
        tiers: dict[str, dict[str, Any]] | None = None,
        nodes: dict[str, str] | None = None,
    ) -> None:
        self.monitors = monitors
        self.capacity = capacity
        self.api_url = api_url.rstrip("/")
        self.api_key_env = api_key_env
        self.interval = interval
        self.dry_run = dry_run
        self.limits = Limits(**(limits or {}))
        self.tiers = {
            vmid: (str(t["name"]), Limits(**{k: v for k, v in t.items() if k != "name"}))
            for vmid, t in (tiers or {}).items()
        }
        self.nodes = nodes or {}
        self.capacity_seen: dict[str, dict[str, Any]] = {}
        self.policy = ForecastPolicy(ModelSettings(**(settings or {})))
        self.ignore = set(ignore or [])
        self.timeout = timeout
        self.log = DecisionLog(decisions_kept)
        self.cycles = 0
        metrics = Metrics("autoscale")
        self.failures = metrics.counter(
            "autoscale_api_scaling_failures_total",
            "Scaling actions that failed",
            ("container_id", "resource", "reason"),
        )
        self._tasks = BackgroundTasks("autoscale")
        self._started = False
        self._held: dict[str, dict[str, deque[dict[str, Any]]]] = {}  # host -> vmid -> copy of its monitor's ring

    def _client(self) -> httpx.AsyncClient:
        key = os.environ.get(self.api_key_env, "").split(",")[0].strip()
        return httpx.AsyncClient(base_url=self.api_url, headers={"X-API-Key": key}, timeout=self.timeout)

    async def start(self) -> bool:
        if not self._started:
            self._started = True
            self._tasks.every(self.interval, self.cycle, name="scaler")
        return True

    def tier(self, vmid: str) -> tuple[str, Limits]:
        return self.tiers.get(vmid, ("default", self.limits))

    async def _allocation(self, client: httpx.AsyncClient, host: str, vmid: str) -> Allocation | None:
        try:
            response = await client.get("/resource/lxc/config", params={"lxc_id": vmid})
            data = response.json().get("data") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            data = None
        if not data or data.get("cores") is None or data.get("memory_mb") is None:
            self.failures.labels(container_id=vmid, resource="cpu", reason="unknown_allocation").inc()
            reason = "unknown allocation: GET /resource/lxc/config gave no cores or memory"
            self.record(Decision(time.time(), host, vmid, "cpu", "skip", 0, 0, reason))
            return None
        return Allocation(int(data["cores"]), int(data["memory_mb"]))

    async def _host(self, host: str, monitor: ActorHandle[MonitorActor], managed: set[str]) -> dict[str, Any]:
        """The node's live capacity, minus the running guests the model does not manage (config when pvesh fails)."""
        cap = await call(monitor, MonitorActor.node_capacity, self.nodes.get(host, host))
        cores, memory = self.capacity[host]
        node = self.nodes.get(host, host)
        if cap["cores"] is None:
            source = "config (" + "; ".join(cap["errors"])[:300] + ")"
        else:
            source = f"pvesh /nodes/{node}/status, read {max(0.0, time.time() - cap['read_at']):.0f} s ago"
            if cap["errors"]:
                source += " (" + "; ".join(cap["errors"])[:300] + ")"
        others = [alloc for key, alloc in cap["guests"].items() if key not in managed]
        seen = {
            "cores": cap["cores"] or cores,
            "memory_mb": cap["memory_mb"] or memory,
            "other_cores": sum(c for c, _ in others),
            "other_memory_mb": sum(m for _, m in others),
            "source": source,
        }
        self.capacity_seen[host] = seen
        return seen

    async def _histories(self, host: str, monitor: ActorHandle[MonitorActor]) -> dict[str, list[dict[str, Any]]]:
        """The monitor's rings (as `MonitorActor.histories` gives them), kept in step by asking only for
        the samples this copy lacks (`MonitorActor.history_since`)."""
        held = self._held.get(host, {})
        since = {vmid: ring[-1]["t"] for vmid, ring in held.items() if ring}
        answer = await call(monitor, MonitorActor.history_since, since)
        kept: dict[str, deque[dict[str, Any]]] = {}
        for vmid, part in answer["containers"].items():
            older = [r for r in held.get(vmid, ()) if r["t"] >= part["first"]]  # a restarted monitor holds less
            kept[vmid] = deque([*older, *part["samples"]], maxlen=int(answer["maxlen"]))
        self._held[host] = kept
        return {vmid: list(ring) for vmid, ring in kept.items()}

    async def _views(self, client: httpx.AsyncClient) -> list[HostView]:
        views = []
        for host, monitor in self.monitors.items():
            histories = await self._histories(host, monitor)
            containers = {}
            for vmid, rows in histories.items():
                if vmid in self.ignore or len(rows) < 2:
                    continue
                alloc = await self._allocation(client, host, vmid)
                if alloc is not None:
                    samples = [Sample(**r) for r in rows]
                    name, limits = self.tier(vmid)
                    containers[vmid] = ContainerView(vmid, alloc, samples, limits, name)
            cap = await self._host(host, monitor, {f"lxc/{v}" for v in containers})
            views.append(HostView(host, containers=containers, **cap))
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
                self.record(d)
        self.cycles += 1
        return len(decisions)

    def record(self, d: Decision) -> None:
        """Settle the decision's outcome, keep it (bounded) and log it."""
        d.settle()
        row = d.as_dict()
        self.log.add(row)
        log.info("scaling decision", extra={"decision": row})

    async def recent(self, limit: int = 100) -> list[dict[str, Any]]:
        return self.log.query(limit=limit)

    async def decisions(
        self, vmid: str | None = None, action: str | None = None, since: float | None = None, limit: int = 100
    ) -> dict[str, Any]:
        return {
            "decisions": self.log.query(vmid, action, since, limit),
            "kept": len(self.log),
            "capacity_kept": self.log.keep,
        }

    async def timelines(self, vmid: str | None = None, decisions: int = 500) -> dict[str, Any]:
        """Per container: its samples (usage and allocation over time) and the newest decisions about it."""
        out = []
        for host, monitor in self.monitors.items():
            histories = await call(monitor, MonitorActor.histories)
            for ctid in sorted(histories, key=int):
                if vmid is not None and ctid != vmid:
                    continue
                samples = [{k: r[k] for k in TIMELINE_FIELDS} for r in histories[ctid]]
                out.append(
                    {
                        "vmid": ctid,
                        "host": host,
                        "tier": self.tier(ctid)[0],
                        "samples": samples,
                        "decisions": self.log.query(ctid, limit=decisions),
                    }
                )
        return {"containers": out}

    async def status(self) -> dict[str, Any]:
        return {
            "cycles": self.cycles,
            "dry_run": self.dry_run,
            "decisions": len(self.log),
            "capacity": self.capacity_seen,
        }

    async def stop(self) -> None:
        await self._tasks.stop()
