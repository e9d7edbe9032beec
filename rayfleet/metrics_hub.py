"""The metrics hub: one actor that holds the cluster-wide value of every metric.

Replicas never expose their own registry: they push deltas (counters, histogram
buckets, gauge increments) and absolute gauge values here in batches, and every
scrape renders from here. A counter therefore only ever grows, whichever
replica answers the scrape. If the hub restarts its counters start from zero,
which Prometheus treats as an ordinary counter reset.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import CollectorRegistry

HUB_ACTOR_NAME = "rayfleet-metrics-hub"

# (kind, documentation, label names, buckets)
FamilyMeta = tuple[str, str, tuple[str, ...], tuple[float, ...]]
SeriesKey = tuple[str, tuple[str, ...]]


class MetricsHub:
    """Accumulates pushed metric deltas per component and renders them."""

    def __init__(self) -> None:
        self._families: dict[str, dict[str, FamilyMeta]] = {}
        self._values: dict[str, dict[SeriesKey, float]] = {}
        self._histograms: dict[str, dict[SeriesKey, list[float]]] = {}

    def push(
        self,
        component: str,
        families: dict[str, FamilyMeta],
        counter_deltas: dict[SeriesKey, float],
        gauge_sets: dict[SeriesKey, float],
        gauge_deltas: dict[SeriesKey, float],
        histogram_deltas: dict[SeriesKey, list[float]],
    ) -> None:
        """Apply one batch from one replica."""
        known = self._families.setdefault(component, {})
        for name, meta in families.items():
            known.setdefault(name, tuple(meta))  # type: ignore[arg-type]
        values = self._values.setdefault(component, {})
        for key, delta in counter_deltas.items():
            if delta > 0:
                values[key] = values.get(key, 0.0) + delta
        for key, value in gauge_sets.items():
            values[key] = value
        for key, delta in gauge_deltas.items():
            values[key] = values.get(key, 0.0) + delta
        hists = self._histograms.setdefault(component, {})
        for key, buckets in histogram_deltas.items():
            seen = hists.get(key)
            hists[key] = list(buckets) if seen is None else [a + b for a, b in zip(seen, buckets, strict=False)]

    def snapshot(self, component: str) -> dict[str, Any]:
        """Raw values of a component (for tests and notebooks)."""
        out: dict[str, Any] = {}
        for (name, labels), value in self._values.get(component, {}).items():
            out.setdefault(name, {})[labels] = value
        for (name, labels), counts in self._histograms.get(component, {}).items():
            out.setdefault(name, {})[labels] = list(counts)
        return out

    def render(self, component: str) -> bytes:
        """Prometheus text exposition of one component's metrics."""
        registry = CollectorRegistry(auto_describe=False)
        registry.register(
            _Collector(
                self._families.get(component, {}), self._values.get(component, {}), self._histograms.get(component, {})
            )
        )
        return generate_latest(registry)


class _Collector:
    def __init__(
        self, families: dict[str, FamilyMeta], values: dict[SeriesKey, float], hists: dict[SeriesKey, list[float]]
    ) -> None:
        self._families = families
        self._values = values
        self._hists = hists

    def collect(self) -> Iterable[Any]:
        for name in sorted(self._families):
            kind, doc, labels, buckets = self._families[name]
            series = sorted((k[1], v) for k, v in self._values.items() if k[0] == name)
            family: CounterMetricFamily | GaugeMetricFamily | HistogramMetricFamily
            if kind in ("counter", "gauge"):
                family = (CounterMetricFamily if kind == "counter" else GaugeMetricFamily)(
                    name, doc, labels=list(labels)
                )
                for labelvalues, value in series:
                    family.add_metric(list(labelvalues), value)
            else:
                family = HistogramMetricFamily(name, doc, labels=list(labels))
                for labelvalues, data in sorted((k[1], v) for k, v in self._hists.items() if k[0] == name):
                    counts, total = data[:-2], data[-2]
                    cumulative: list[tuple[str, float]] = []
                    running = 0.0
                    for bound, count in zip([*list(buckets), float("inf")], counts, strict=False):
                        running += count
                        cumulative.append((_bound(bound), running))
                    family.add_metric(list(labelvalues), cumulative, total)
            yield family


def _bound(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(float(value))
