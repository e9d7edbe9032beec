"""Data-plane metrics (spec 001 §4, exact names and labels) and ring latency statistics.

The Prometheus families are cluster-wide through ``rayfleet.metrics``. Ring and stage
latencies and the recent-trace timeline (``/api/v1/metrics/latency`` and
``/api/v1/metrics/ring-timeline``) are kept per replica: the answering replica reports
its own recent window (the last 500 samples per ring/stage, the last 20 traces).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from rayfleet.metrics import Metrics

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
TTFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class GatewayMetrics:
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.requests = metrics.counter(
            "llm_proxy_requests_total", "Requests handled", ("method", "endpoint", "status")
        )
        self.errors = metrics.counter("llm_proxy_request_errors_total", "Failed requests by class", ("error_class",))
        self.latency = metrics.histogram(
            "llm_proxy_request_latency_seconds", "Request latency", buckets=LATENCY_BUCKETS
        )
        self.ttft = metrics.histogram(
            "llm_proxy_streaming_ttft_seconds", "Time to first token of streams", buckets=TTFT_BUCKETS
        )
        self.tokens = metrics.counter("llm_proxy_token_usage_total", "Tokens used", ("endpoint", "role"))
        self.cost = metrics.counter("llm_proxy_cost_total", "Estimated cost in USD", ("endpoint", "model"))
        self.budget = metrics.gauge("llm_proxy_budget_consumed_usd", "Budget consumed today (UTC), USD")
        self.circuit = metrics.gauge("llm_proxy_circuit_open", "1 when the endpoint's breaker is open", ("endpoint",))
        self.injection = metrics.counter("llm_proxy_injection_blocked_total", "Requests blocked as injections")
        self.auth_failures = metrics.counter("llm_proxy_auth_failures_total", "Authentication failures", ("reason",))
        self.load_shed = metrics.counter("llm_proxy_load_shed_total", "Requests refused by admission control")
        self.injection.inc(0)
        self.load_shed.inc(0)
        self.budget.set(0.0)


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


class RingStats:
    """Per-ring and per-stage durations (ms), TTFT samples and the last traces."""

    def __init__(self, window: int = 500, traces: int = 20) -> None:
        self.window = window
        self.rings: dict[str, deque[float]] = {}
        self.stages: dict[str, deque[float]] = {}
        self.stage_calls: dict[str, int] = {}
        self.ttft: deque[float] = deque(maxlen=window)
        self.traces: deque[dict[str, Any]] = deque(maxlen=traces)

    def add(self, trace: dict[str, Any]) -> None:
        for ring, info in trace["rings"].items():
            self.rings.setdefault(ring, deque(maxlen=self.window)).append(info["duration_ms"])
            for stage in info["plugins"]:
                self.stages.setdefault(stage["name"], deque(maxlen=self.window)).append(stage["ms"])
                self.stage_calls[stage["name"]] = self.stage_calls.get(stage["name"], 0) + 1
        if trace.get("ttft_ms") is not None:
            self.ttft.append(trace["ttft_ms"])
        self.traces.append(trace)

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
