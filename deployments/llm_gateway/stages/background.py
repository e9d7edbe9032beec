"""BACKGROUND: what is kept of each request (spend records, audit trail, export, metrics) and its trace."""

from __future__ import annotations

import time
from typing import Any

from deployments.llm_gateway.audit import AuditTrail
from deployments.llm_gateway.export import RequestExport
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.storage import Record, RecordWriter
from deployments.llm_gateway.switches import LatencyFeed
from deployments.llm_gateway.telemetry import GatewayMetrics
from deployments.llm_gateway.tracing import RequestTracer
from rayfleet.http import client_ip
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")


def _elapsed_ms(ctx: Context) -> float:
    return round((time.perf_counter() - ctx.started) * 1000, 3)


def _ttft_ms(ctx: Context) -> float | None:
    return round(ctx.ttft * 1000, 3) if ctx.ttft is not None else None


def outcome(ctx: Context) -> dict[str, Any]:
    """What the audit trail and the export keep of a request (never its text or its key)."""
    usage = ctx.usage
    return {
        "request_id": ctx.request_id,
        "route": ctx.route,
        "model": ctx.model or ctx.requested_model,
        "endpoint": ctx.endpoint,
        "status": ctx.status,
        "prompt_tokens": usage.prompt_tokens if usage else 0,
        "completion_tokens": usage.completion_tokens if usage else 0,
        "cost_usd": round(ctx.cost, 8),
        "stream": ctx.stream,
        "security": {
            "injection_score": ctx.injection_score,
            "links_replaced": ctx.links_replaced,
            "refusal": ctx.error_class if ctx.status >= 400 else None,
        },
        "cache": ctx.cache_status,
        "fallback": ctx.fallback,
    }


class Records:
    """``records``: the spend record of the request (batched to the store)."""

    def __init__(self, records: RecordWriter) -> None:
        self.records = records

    async def run(self, ctx: Context) -> None:
        usage = ctx.usage
        self.records.add(
            Record(
                ts=ctx.wall,
                request_id=ctx.request_id,
                tenant=ctx.tenant,
                route=ctx.route,
                model=ctx.model,
                endpoint=ctx.endpoint,
                status=ctx.status,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cost_usd=ctx.cost,
                latency_ms=_elapsed_ms(ctx),
                ttft_ms=_ttft_ms(ctx),
                cache=ctx.cache_status,
                stream=ctx.stream,
                fallback=ctx.fallback,
                key_id=ctx.virtual_key["id"] if ctx.virtual_key is not None else None,
                team=ctx.virtual_key.get("team") if ctx.virtual_key is not None else None,
            )
        )


class Audit:
    """``audit``: the request's outcome in the hash-chained audit trail (when it is on)."""

    def __init__(self, audit: AuditTrail | None) -> None:
        self.audit = audit

    async def run(self, ctx: Context) -> None:
        if self.audit is None:
            return
        self.audit.add(ctx.wall, {"tenant": ctx.tenant, "client_ip": client_ip(ctx.request), **outcome(ctx)})


class Export:
    """``export``: the request's outcome in the daily JSONL export (when it is on)."""

    def __init__(self, export: RequestExport | None) -> None:
        self.export = export

    async def run(self, ctx: Context) -> None:
        if self.export is None:
            return
        self.export.add(
            ctx.wall,
            {"key_fingerprint": ctx.tenant, **outcome(ctx), "latency_ms": _elapsed_ms(ctx), "ttft_ms": _ttft_ms(ctx)},
        )


class Telemetry:
    """``telemetry``: request count, latency, time to first token and error class."""

    def __init__(self, metrics: GatewayMetrics) -> None:
        self.metrics = metrics

    async def run(self, ctx: Context) -> None:
        m = self.metrics
        m.requests.labels(method=ctx.request.method, endpoint=ctx.route, status=str(ctx.status)).inc()
        m.latency.observe(time.perf_counter() - ctx.started)
        if ctx.ttft is not None:
            m.ttft.observe(ctx.ttft)
        if ctx.error_class:
            m.errors.labels(error_class=ctx.error_class).inc()


class Trace:
    """After the rings: the request's span (``tracer``) and its per-ring timings (``latency``)."""

    def __init__(self, tracer: RequestTracer, latency: LatencyFeed) -> None:
        self.tracer = tracer
        self.latency = latency

    def run(self, ctx: Context) -> None:
        total_ms = _elapsed_ms(ctx)
        try:
            self.tracer.record(ctx)
        except Exception:
            log.warning("tracing a request failed", exc_info=True)
        self.latency.add(
            {
                "req_id": ctx.request_id,
                "timestamp": ctx.wall,
                "rings": ctx.rings,
                "total_ms": total_ms,
                "upstream_ms": round(ctx.upstream_ms, 3),
                "ttft_ms": _ttft_ms(ctx),
            }
        )
