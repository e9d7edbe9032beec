"""Tracing (``observability.tracing``): one OpenTelemetry server span per HTTP request, every route.

With ``enabled`` and an ``otlp_endpoint`` (``http://host:4318``; ``/v1/traces`` is added
when missing) spans go out over OTLP/HTTP (protobuf) in batches from a background
thread; with ``console_exporter`` they are also written to stdout. Neither, or the
OpenTelemetry packages missing (a warning): no tracer, no middleware, nothing to pay.

``TracingMiddleware`` opens a server span ``<METHOD> <route template>`` for every request
(inference, control plane, health, metrics, auth, UI, docs), continuing the caller's
``traceparent`` when there is one, with the method, route, status and request id. A
``/v1/*`` request's span is ended by its pipeline (after the stream, when there is one)
with the model, endpoint, tokens, cache status and security decisions, and one child span
per ring, laid end to end from the request's start (the rings run one after the other).
Upstream requests carry the span's ``traceparent``. The provider is this replica's own
(never the process-global one), flushed and shut down with the gateway.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from deployments.llm_gateway.config import Tracing
from deployments.llm_gateway.pipeline import RINGS, Context
from rayfleet.http import status_watcher
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

SPAN_KEY = "otel_span"
OWNED_KEY = "otel_span_owned"


def _otlp_url(endpoint: str) -> str:
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def _state(scope: Scope) -> dict[str, Any]:
    state: dict[str, Any] = scope.setdefault("state", {})
    return state


class RequestTracer:
    def __init__(self, cfg: Tracing) -> None:
        self.provider: Any = None
        self.tracer: Any = None
        if not cfg.enabled or not (cfg.otlp_endpoint or cfg.console_exporter):
            return
        try:
            import requests
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
            from opentelemetry.trace import SpanKind, set_span_in_context
            from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
        except ImportError as exc:
            log.warning(
                "observability.tracing is enabled but the OpenTelemetry packages are missing: no spans",
                extra={"missing": exc.name},
            )
            return
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
        self._server = SpanKind.SERVER
        self._in_context = set_span_in_context
        self._propagator = TraceContextTextMapPropagator()

    @property
    def active(self) -> bool:
        return self.tracer is not None

    # -- every route (the middleware) ------------------------------------------
    def open(self, scope: Scope) -> Any:
        """A server span for the request of ``scope``, child of the caller's ``traceparent`` if any."""
        carrier: dict[str, str] = {}
        for name, value in scope.get("headers", ()):
            if name in (b"traceparent", b"tracestate"):
                carrier[name.decode()] = value.decode("latin-1")
        parent = self._propagator.extract(carrier) if carrier else None
        method = scope.get("method", "")
        return self.tracer.start_span(
            method, context=parent, kind=self._server, attributes={"http.request.method": method}
        )

    def close(self, scope: Scope, span: Any, status: int) -> None:
        route = getattr(scope.get("route"), "path", None)
        if route:
            span.update_name(f"{scope.get('method', '')} {route}")
            span.set_attribute("http.route", route)
        span.set_attribute("http.response.status_code", status)
        request_id = _state(scope).get("request_id")
        if request_id:
            span.set_attribute("rayfleet.request_id", request_id)
        if status >= 500:
            span.set_attribute("error.type", str(status))
        span.end()

    def inject(self, scope: Scope, headers: dict[str, str]) -> None:
        """Add the request's ``traceparent`` to an upstream request's headers."""
        span = _state(scope).get(SPAN_KEY)
        if span is not None:
            self._propagator.inject(headers, context=self._in_context(span))

    # -- /v1/* (the pipeline) ---------------------------------------------------
    def claim(self, ctx: Context) -> None:
        """The pipeline ends this request's span (with its rings), not the middleware."""
        _state(ctx.request.scope)[OWNED_KEY] = True

    def record(self, ctx: Context) -> None:
        root = _state(ctx.request.scope).get(SPAN_KEY)
        if root is None or self.tracer is None:
            return
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
        root.update_name(f"{ctx.request.method} {ctx.route}")
        root.set_attributes(attributes)
        parent = self._in_context(root)
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
        root.end()  # now: after the stream, when there was one

    def shutdown(self) -> None:
        """Flush what is pending and stop the exporter threads (blocking)."""
        if self.provider is not None:
            self.provider.shutdown()
            self.provider = self.tracer = None


class TracingMiddleware:
    """Installed only when tracing is on: a server span around every request of the app."""

    def __init__(self, app: ASGIApp, tracer: RequestTracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.tracer.active:
            await self.app(scope, receive, send)
            return
        span = self.tracer.open(scope)
        state = _state(scope)
        state[SPAN_KEY] = span
        send_status, status = status_watcher(send)
        try:
            await self.app(scope, receive, send_status)
        except BaseException as exc:
            span.record_exception(exc)
            raise
        finally:
            if not state.get(OWNED_KEY):
                self.tracer.close(scope, span, status() or 500)
