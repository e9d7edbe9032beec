"""Tracing (``observability.tracing``): one OpenTelemetry trace per ``/v1/*`` request.

With ``enabled`` and an ``otlp_endpoint`` (``http://host:4318``; ``/v1/traces`` is added
when missing) spans go out over OTLP/HTTP (protobuf) in batches from a background
thread; with ``console_exporter`` they are also written to stdout. Neither: no tracer.
A request's trace is a span ``<METHOD> <route>`` (service ``service_name``) with one
child span per ring, laid end to end from the request's start (the rings run one after
the other), carrying the request id, status, model, endpoint, tokens, cache status and
the security decisions. The provider is this replica's own (never the process-global
one), flushed and shut down with the gateway. Control-plane routes are not traced.
"""

from __future__ import annotations

from typing import Any

from deployments.llm_gateway.config import Tracing
from deployments.llm_gateway.pipeline import RINGS, Context


def _otlp_url(endpoint: str) -> str:
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


class RequestTracer:
    def __init__(self, cfg: Tracing) -> None:
        self.provider: Any = None
        self.tracer: Any = None
        if not cfg.enabled or not (cfg.otlp_endpoint or cfg.console_exporter):
            return
        import requests
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

        provider = TracerProvider(resource=Resource.create({"service.name": cfg.service_name}))
        if cfg.otlp_endpoint:
            session = requests.Session()
            session.trust_env = False  # never through an environment proxy
            exporter = OTLPSpanExporter(endpoint=_otlp_url(cfg.otlp_endpoint), session=session, timeout=5)
            provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
        if cfg.console_exporter:
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        self.provider = provider
        self.tracer = provider.get_tracer("rayfleet.llm_gateway")

    def record(self, ctx: Context, total_ms: float) -> None:
        if self.tracer is None:
            return
        from opentelemetry import trace

        start = int(ctx.wall * 1e9)
        usage = ctx.usage
        attributes = {
            "http.request.method": ctx.request.method,
            "http.route": ctx.route,
            "http.response.status_code": ctx.status,
            "rayfleet.request_id": ctx.request_id,
            "gen_ai.request.model": ctx.requested_model,
            "gen_ai.response.model": ctx.model,
            "rayfleet.endpoint": ctx.endpoint,
            "rayfleet.cache": ctx.cache_status,
            "rayfleet.stream": ctx.stream,
            "rayfleet.injection_score": ctx.injection_score,
            "rayfleet.links_replaced": ctx.links_replaced,
            "gen_ai.usage.input_tokens": usage.prompt_tokens if usage else 0,
            "gen_ai.usage.output_tokens": usage.completion_tokens if usage else 0,
        }
        if ctx.error_class:
            attributes["error.type"] = ctx.error_class
        root = self.tracer.start_span(f"{ctx.request.method} {ctx.route}", start_time=start, attributes=attributes)
        parent = trace.set_span_in_context(root)
        at = start
        for ring in RINGS:
            info = ctx.rings.get(ring)
            if info is None:
                continue
            end = at + int(info["duration_ms"] * 1e6)
            plugins = {f"rayfleet.plugin.{p['name']}_ms": p["ms"] for p in info["plugins"]}
            span = self.tracer.start_span(ring, context=parent, start_time=at, attributes=plugins)
            span.end(end_time=end)
            at = end
        root.end(end_time=max(at, start + int(total_ms * 1e6)))

    def shutdown(self) -> None:
        """Flush what is pending and stop the exporter threads (blocking)."""
        if self.provider is not None:
            self.provider.shutdown()
            self.provider = self.tracer = None
