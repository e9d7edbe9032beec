"""Cluster-wide metrics for components: a replica-side client of the metrics hub.

Usage::

    metrics = Metrics("llm_gateway")
    requests = metrics.counter("llm_proxy_requests_total", "Requests", ("method", "endpoint", "status"))
    requests.labels(method="POST", endpoint="/v1/chat/completions", status="200").inc()
    body = await metrics.render()        # cluster-wide text format

Recording is a dict update (no I/O on the request path); a background task
flushes the batch to the hub every `flush_interval` seconds, and `render()`
flushes this replica's pending batch first, so a scrape always includes the
answering replica's own latest increments.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import threading
from collections.abc import Sequence
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import PlainTextResponse

from rayfleet import state as state_mod
from rayfleet.metrics_hub import HUB_ACTOR_NAME, FamilyMeta, MetricsHub, SeriesKey
from rayfleet.state import ActorHandle
from rayfleet.tasks import BackgroundTasks

CONTENT_TYPE = CONTENT_TYPE_LATEST

# keyword arguments for a `/metrics` route, so the OpenAPI documents Prometheus text, not JSON
METRICS_ROUTE: dict[str, Any] = {
    "response_class": PlainTextResponse,
    "responses": {
        200: {
            "description": "Prometheus text exposition format, cluster-wide values",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    },
}
DEFAULT_BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class _Child:
    def __init__(self, family: _Family, labelvalues: tuple[str, ...]) -> None:
        self._family = family
        self._key: SeriesKey = (family.name, labelvalues)

    def inc(self, amount: float = 1.0) -> None:
        fam = self._family
        if fam.kind == "counter" and amount < 0:
            raise ValueError("counters only go up")
        fam.owner._add(fam.kind, self._key, amount)

    def dec(self, amount: float = 1.0) -> None:
        if self._family.kind != "gauge":
            raise TypeError("only gauges go down")
        self._family.owner._add("gauge", self._key, -amount)

    def set(self, value: float) -> None:
        if self._family.kind != "gauge":
            raise TypeError("only gauges are set")
        self._family.owner._set(self._key, float(value))

    def observe(self, value: float) -> None:
        fam = self._family
        if fam.kind != "histogram":
            raise TypeError("only histograms observe")
        fam.owner._observe(self._key, fam.buckets, float(value))


class _Family:
    def __init__(
        self, owner: Metrics, name: str, kind: str, labels: tuple[str, ...], buckets: tuple[float, ...]
    ) -> None:
        self.owner = owner
        self.name = name
        self.kind = kind
        self.labelnames = labels
        self.buckets = buckets
        self._unlabelled = _Child(self, ()) if not labels else None

    def labels(self, *values: Any, **kv: Any) -> _Child:
        if kv:
            try:
                values = tuple(str(kv[n]) for n in self.labelnames)
            except KeyError as exc:
                raise ValueError(f"{self.name}: missing label {exc}") from None
            if len(kv) != len(self.labelnames):
                raise ValueError(f"{self.name}: labels are {self.labelnames}")
        else:
            values = tuple(str(v) for v in values)
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: labels are {self.labelnames}")
        return _Child(self, values)

    def _child(self) -> _Child:
        if self._unlabelled is None:
            raise ValueError(f"{self.name} needs labels {self.labelnames}")
        return self._unlabelled

    def inc(self, amount: float = 1.0) -> None:
        self._child().inc(amount)

    def dec(self, amount: float = 1.0) -> None:
        self._child().dec(amount)

    def set(self, value: float) -> None:
        self._child().set(value)

    def observe(self, value: float) -> None:
        self._child().observe(value)


class Metrics:
    """Metric families of one component, backed by the cluster-wide hub."""

    def __init__(self, component: str, hub: ActorHandle[MetricsHub] | None = None, flush_interval: float = 1.0) -> None:
        self.component = component
        self._hub = hub
        self._flush_interval = flush_interval
        self._meta: dict[str, FamilyMeta] = {}
        self._families: dict[str, _Family] = {}
        self._lock = threading.Lock()
        self._counters: dict[SeriesKey, float] = {}
        self._gauge_sets: dict[SeriesKey, float] = {}
        self._gauge_deltas: dict[SeriesKey, float] = {}
        self._hists: dict[SeriesKey, list[float]] = {}
        self._background = BackgroundTasks(component)
        self._flush_lock: asyncio.Lock | None = None
        self._new_meta = True

    # -- declaration -------------------------------------------------------
    def _declare(self, name: str, kind: str, doc: str, labels: Sequence[str], buckets: Sequence[float] = ()) -> _Family:
        existing = self._families.get(name)
        if existing is not None:
            if existing.kind != kind or existing.labelnames != tuple(labels):
                raise ValueError(f"metric {name} already declared differently")
            return existing
        family = _Family(self, name, kind, tuple(labels), tuple(sorted(buckets)))
        self._families[name] = family
        self._meta[name] = (kind, doc, tuple(labels), tuple(sorted(buckets)))
        self._new_meta = True
        return family

    def counter(self, name: str, doc: str, labels: Sequence[str] = ()) -> _Family:
        return self._declare(name, "counter", doc, labels)

    def gauge(self, name: str, doc: str, labels: Sequence[str] = ()) -> _Family:
        return self._declare(name, "gauge", doc, labels)

    def histogram(
        self, name: str, doc: str, labels: Sequence[str] = (), buckets: Sequence[float] = DEFAULT_BUCKETS
    ) -> _Family:
        return self._declare(name, "histogram", doc, labels, buckets)

    # -- recording (hot path: dict updates only) ---------------------------
    def _add(self, kind: str, key: SeriesKey, amount: float) -> None:
        with self._lock:
            target = self._counters if kind == "counter" else self._gauge_deltas
            target[key] = target.get(key, 0.0) + amount
        self._ensure_flusher()

    def _set(self, key: SeriesKey, value: float) -> None:
        with self._lock:
            self._gauge_sets[key] = value
            self._gauge_deltas.pop(key, None)
        self._ensure_flusher()

    def _observe(self, key: SeriesKey, buckets: tuple[float, ...], value: float) -> None:
        index = bisect.bisect_left(buckets, value)
        with self._lock:
            row = self._hists.get(key)
            if row is None:
                row = [0.0] * (len(buckets) + 3)  # buckets, +Inf, sum, count
                self._hists[key] = row
            row[index] += 1
            row[-2] += value
            row[-1] += 1
        self._ensure_flusher()

    # -- transport ---------------------------------------------------------
    def _hub_handle(self) -> ActorHandle[MetricsHub]:
        if self._hub is None:
            self._hub = state_mod.actor(MetricsHub, HUB_ACTOR_NAME)
        return self._hub

    def _ensure_flusher(self) -> None:
        """Start the periodic flush once there is a running loop (a failed flush keeps its batch)."""
        if self._background.running:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._background.every(self._flush_interval, self.flush, name="metrics-flush")

    async def flush(self) -> None:
        """Send this replica's pending batch to the hub."""
        if self._flush_lock is None:
            self._flush_lock = asyncio.Lock()
        async with self._flush_lock:
            with self._lock:
                batch = (self._counters, self._gauge_sets, self._gauge_deltas, self._hists)
                self._counters, self._gauge_sets, self._gauge_deltas, self._hists = {}, {}, {}, {}
                meta = dict(self._meta) if self._new_meta or any(batch) else {}
                self._new_meta = False
            if not any(batch) and not meta:
                return
            try:
                await state_mod.call(self._hub_handle(), MetricsHub.push, self.component, meta, *batch)
            except Exception:
                with self._lock:
                    self._merge_back(*batch)
                    self._new_meta = True
                raise

    def _merge_back(
        self,
        counters: dict[SeriesKey, float],
        gauge_sets: dict[SeriesKey, float],
        gauge_deltas: dict[SeriesKey, float],
        hists: dict[SeriesKey, list[float]],
    ) -> None:
        for key, value in counters.items():
            self._counters[key] = self._counters.get(key, 0.0) + value
        for key, value in gauge_sets.items():
            self._gauge_sets.setdefault(key, value)
        for key, value in gauge_deltas.items():
            self._gauge_deltas[key] = self._gauge_deltas.get(key, 0.0) + value
        for key, row in hists.items():
            mine = self._hists.get(key)
            self._hists[key] = row if mine is None else [a + b for a, b in zip(mine, row, strict=False)]

    async def render(self) -> bytes:
        """Cluster-wide Prometheus text for this component."""
        await self.flush()
        return await state_mod.call(self._hub_handle(), MetricsHub.render, self.component)

    async def snapshot(self) -> dict[str, Any]:
        await self.flush()
        return await state_mod.call(self._hub_handle(), MetricsHub.snapshot, self.component)

    async def close(self) -> None:
        """Stop the flusher after a last flush (app shutdown)."""
        await self._background.stop()
        with contextlib.suppress(Exception):
            await self.flush()
