"""Data-plane metrics (spec 001 §4, exact names and labels), cluster-wide through ``rayfleet.metrics``.

Ring and plugin latencies live in the ``LatencyBoard`` actor (``actors/llm_gateway/latency.py``).
"""

from __future__ import annotations

from deployments.llm_gateway.shared_state import BudgetLeases
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
        self.negative_hits = metrics.counter(
            "llm_proxy_negative_cache_hits_total", "Blocked prompts refused again from the negative cache"
        )
        self.auth_failures = metrics.counter("llm_proxy_auth_failures_total", "Authentication failures", ("reason",))
        self.load_shed = metrics.counter("llm_proxy_load_shed_total", "Requests refused by admission control")
        self.export_dropped = metrics.counter(
            "llm_proxy_export_dropped_total", "Request export lines dropped because the export queue was full"
        )
        self.injection.inc(0)
        self.negative_hits.inc(0)
        self.export_dropped.inc(0)
        self.load_shed.inc(0)
        self.budget.set(0.0)


class MetricsText:
    """The cluster-wide Prometheus text (``/metrics`` and the standalone exporter), today's spend pushed first."""

    def __init__(self, metrics: Metrics, budget: BudgetLeases) -> None:
        self.metrics = metrics
        self.budget = budget

    async def render(self) -> bytes:
        await self.budget.flush()
        return await self.metrics.render()
