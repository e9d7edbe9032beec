"""Ring and plugin latencies of every replica, in one named actor.

Replicas batch their request traces and push them here (one call per batch, never one
per request); ``/api/v1/metrics/latency`` and ``/api/v1/metrics/ring-timeline`` read the
cluster-wide window: the last ``window`` samples per ring and per plugin, the last
``traces`` request traces.
"""

from __future__ import annotations

from collections import deque
from typing import Any


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    idx = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[idx]


def _summary(values: deque[float]) -> dict[str, float]:
    data = sorted(values)
    return {
        "count": len(data),
        "p50": round(_percentile(data, 0.5), 3),
        "p95": round(_percentile(data, 0.95), 3),
        "p99": round(_percentile(data, 0.99), 3),
    }


class LatencyBoard:
    """The actor: per-ring and per-plugin durations (ms), TTFT samples and the last traces."""

    def __init__(self, window: int = 500, traces: int = 20) -> None:
        self.window = window
        self.rings: dict[str, deque[float]] = {}
        self.stages: dict[str, deque[float]] = {}
        self.stage_calls: dict[str, int] = {}
        self.ttft: deque[float] = deque(maxlen=window)
        self.traces: deque[dict[str, Any]] = deque(maxlen=traces)

    def add(self, traces: list[dict[str, Any]]) -> int:
        """Take a batch of request traces; returns how many are held."""
        for trace in traces:
            for ring, info in trace["rings"].items():
                self.rings.setdefault(ring, deque(maxlen=self.window)).append(info["duration_ms"])
                for stage in info["plugins"]:
                    self.stages.setdefault(stage["name"], deque(maxlen=self.window)).append(stage["ms"])
                    self.stage_calls[stage["name"]] = self.stage_calls.get(stage["name"], 0) + 1
            if trace.get("ttft_ms") is not None:
                self.ttft.append(trace["ttft_ms"])
            self.traces.append(trace)
        return len(self.traces)

    def latency(self) -> dict[str, Any]:
        plugins = {}
        for name, values in self.stages.items():
            summary = _summary(values)
            plugins[name] = {
                "avg_ms": round(sum(values) / len(values), 3) if values else 0.0,
                "percentiles": {k: summary[k] for k in ("p50", "p95", "p99")},
                "invocations": self.stage_calls.get(name, 0),
            }
        ttft = _summary(self.ttft)
        return {
            "rings": {name: _summary(values) for name, values in self.rings.items()},
            "plugins": plugins,
            "ttft": {"samples": ttft["count"], "p50": ttft["p50"], "p95": ttft["p95"], "p99": ttft["p99"]},
        }

    def timeline(self) -> list[dict[str, Any]]:
        return list(reversed(self.traces))
