"""Tracing: every request, on every route, becomes an OpenTelemetry server span exported over
OTLP/HTTP to a real receiver on loopback (decoded with the OTLP protobuf schema); ``/v1/*``
spans carry one child span per ring, and the upstream gets the span's ``traceparent``."""

from __future__ import annotations

import asyncio
import sys
from contextlib import asynccontextmanager

import uvicorn
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from deployments.llm_gateway.app import create_app
from deployments.llm_gateway.config import GatewayConfig, Tracing
from deployments.llm_gateway.tracing import RequestTracer, TracingMiddleware
from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, base_config, chat
from tests.polling import eventually

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def _value(attr):
    which = attr.value.WhichOneof("value")
    return getattr(attr.value, which) if which else None


@asynccontextmanager
async def otlp_receiver():
    """A real OTLP/HTTP receiver on loopback: yields (endpoint, spans, services)."""
    spans: list[dict] = []
    services: set[str] = set()

    async def traces(request: Request) -> Response:
        assert request.headers["content-type"] == "application/x-protobuf"
        message = ExportTraceServiceRequest.FromString(await request.body())
        for resource_spans in message.resource_spans:
            services.update(_value(a) for a in resource_spans.resource.attributes if a.key == "service.name")
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    spans.append(
                        {
                            "name": span.name,
                            "kind": span.kind,
                            "trace": span.trace_id.hex(),
                            "id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "attrs": {a.key: _value(a) for a in span.attributes},
                        }
                    )
        return Response(b"", media_type="application/x-protobuf")

    port = free_port()
    receiver = uvicorn.Server(
        uvicorn.Config(Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])]), port=port, log_level="error")
    )
    task = asyncio.get_running_loop().create_task(receiver.serve())
    await eventually(lambda: receiver.started, what="the OTLP receiver started")
    try:
        yield f"http://127.0.0.1:{port}", spans, services
    finally:
        receiver.should_exit = True
        await task


async def wait_for(spans: list[dict], gw, requests: int) -> None:
    """Until the server spans of `requests` requests are exported (a stream's ends after its body)."""

    async def exported() -> bool:
        await asyncio.to_thread(gw.gateway.tracer.provider.force_flush)
        return len([s for s in spans if s["kind"] == 2]) >= requests  # SPAN_KIND_SERVER

    await eventually(exported, what=f"the spans of {requests} requests exported")


async def test_requests_are_exported_over_otlp(serve, up1, tmp_path, auth_env):
    async with otlp_receiver() as (endpoint, spans, services):
        cfg = base_config(
            tmp_path,
            {"a": {"base_url": up1.base_url, "models": ["m"]}},
            observability={
                "tracing": {"otlp_endpoint": endpoint, "service_name": "gw-test", "console_exporter": False}
            },
        )
        gw = await serve(cfg)
        async with gw.client() as c:
            assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
            assert (await c.post("/v1/chat/completions", json=chat("nope"))).status_code == 404
            assert (await c.post("/v1/chat/completions", json=chat("m", stream=True))).status_code == 200
        await wait_for(spans, gw, 3)
    assert services == {"gw-test"}
    roots = [s for s in spans if not s["parent"]]
    assert [r["name"] for r in roots] == ["POST /v1/chat/completions"] * 3
    assert all(r["kind"] == 2 for r in roots)  # SPAN_KIND_SERVER
    ok, streamed, missing = sorted(
        roots, key=lambda r: (r["attrs"]["http.response.status_code"], r["attrs"]["rayfleet.stream"])
    )
    assert ok["attrs"]["http.response.status_code"] == 200 and ok["attrs"]["rayfleet.endpoint"] == "a"
    assert ok["attrs"]["http.route"] == "/v1/chat/completions" and ok["attrs"]["http.request.method"] == "POST"
    assert ok["attrs"]["gen_ai.usage.input_tokens"] > 0
    assert streamed["attrs"]["gen_ai.usage.output_tokens"] > 0  # ended by the pipeline, after the stream
    assert missing["attrs"]["http.response.status_code"] == 404 and missing["attrs"]["error.type"]
    rings = [s for s in spans if s["parent"] == ok["id"]]
    assert {s["name"] for s in rings} >= {"INGRESS", "PRE_FLIGHT", "ROUTING", "POST_FLIGHT", "BACKGROUND"}
    assert all(s["trace"] == ok["trace"] for s in rings)
    assert "rayfleet.plugin.injection_scan_ms" in next(s for s in rings if s["name"] == "PRE_FLIGHT")["attrs"]
    # the upstream requests carried their request's trace context
    seen = sorted(r["traceparent"].rsplit("-", 1)[0] for r in up1.requests())  # flags: sampled (+ random id)
    assert seen == sorted(f"00-{r['trace']}-{r['id']}" for r in (ok, streamed))


async def test_every_route_gets_a_server_span(serve, up1, tmp_path, auth_env):
    async with otlp_receiver() as (endpoint, spans, _):
        cfg = base_config(
            tmp_path,
            {"a": {"base_url": up1.base_url, "models": ["m"]}},
            observability={"tracing": {"otlp_endpoint": endpoint, "console_exporter": False}},
        )
        gw = await serve(cfg)
        caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        async with gw.client(key=None) as c:
            assert (await c.get("/health", headers={"traceparent": caller})).status_code == 200
            assert (await c.post("/admin/panic", headers=ADMIN, json={"reason": "drill"})).status_code == 200
            assert (await c.delete("/admin/panic", headers=ADMIN)).status_code == 200
            assert (await c.post("/api/v1/registry/nope/probe", headers=ADMIN)).status_code == 404
            assert (await c.get("/metrics", headers=ADMIN)).status_code == 200
            assert (await c.get("/admin/plugins")).status_code == 401
            assert (await c.get("/auth/providers")).status_code == 200
            assert (await c.get("/ui/registry")).status_code == 200
            assert (await c.get("/no/such/route")).status_code == 404
        await wait_for(spans, gw, 9)
    got = {(s["name"], s["attrs"]["http.response.status_code"]) for s in spans}
    assert got == {
        ("GET /health", 200),
        ("POST /admin/panic", 200),
        ("DELETE /admin/panic", 200),
        ("POST /api/v1/registry/{id}/probe", 404),
        ("GET /metrics", 200),
        ("GET /admin/plugins", 401),
        ("GET /auth/providers", 200),
        ("GET /ui/registry", 200),
        ("GET", 404),  # no route: no template to name it by
    }
    for span in spans:
        assert span["kind"] == 2 and span["attrs"]["http.request.method"] == span["name"].split()[0]
        assert span["attrs"]["rayfleet.request_id"]
        if span["name"] != "GET":
            assert span["attrs"]["http.route"] == span["name"].split(" ", 1)[1]
    health = next(s for s in spans if s["name"] == "GET /health")
    assert (health["trace"], health["parent"]) == ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")


def test_tracing_off_installs_nothing(tmp_path, auth_env, monkeypatch):
    off = create_app(
        GatewayConfig.model_validate(base_config(tmp_path, {}, observability={"tracing": {"enabled": False}}))
    )
    assert not off.state.gateway.tracer.active
    assert TracingMiddleware not in [m.cls for m in off.user_middleware]
    on = create_app(
        GatewayConfig.model_validate(base_config(tmp_path, {}, observability={"tracing": {"console_exporter": True}}))
    )
    assert TracingMiddleware in [m.cls for m in on.user_middleware]
    on.state.gateway.tracer.shutdown()
    # the OpenTelemetry SDK missing: tracing is a no-op, the gateway still starts
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    assert not RequestTracer(Tracing(enabled=True, console_exporter=True)).active


async def test_unexpected_errors_reach_the_error_tracker(serve, up1, tmp_path, auth_env, monkeypatch):
    import gzip
    import json

    events: list[dict] = []

    async def envelope(request: Request) -> Response:
        raw = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            raw = gzip.decompress(raw)
        lines = raw.split(b"\n")
        for header, payload in zip(lines[1::2], lines[2::2], strict=False):
            if json.loads(header).get("type") == "event":
                events.append(json.loads(payload))
        return Response(b"{}", media_type="application/json")

    port = free_port()
    receiver = uvicorn.Server(
        uvicorn.Config(
            Starlette(routes=[Route("/api/42/envelope/", envelope, methods=["POST"])]), port=port, log_level="error"
        )
    )
    task = asyncio.get_running_loop().create_task(receiver.serve())
    await eventually(lambda: receiver.started, what="the Sentry receiver started")
    monkeypatch.setenv("GW_TEST_SENTRY_DSN", f"http://publickey@127.0.0.1:{port}/42")
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["m"]}},
        observability={"error_tracker": {"dsn_env": "GW_TEST_SENTRY_DSN"}, "tracing": {"console_exporter": False}},
    )
    gw = await serve(cfg)

    async def broken(ctx):  # an unexpected bug in a fail-closed plugin
        raise RuntimeError("plugin bug")

    monkeypatch.setattr(gw.gateway.pipeline.stage("model_resolution"), "run", broken)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("m", content="private words"))
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal_error"
    await asyncio.to_thread(gw.gateway.error_tracker.flush)
    await eventually(lambda: events, what="the error reached the tracker")
    receiver.should_exit = True
    await task
    import sentry_sdk

    sentry_sdk.get_client().close()
    assert len(events) == 1
    event = events[0]
    assert event["exception"]["values"][-1]["type"] == "RuntimeError"
    assert event["tags"]["route"] == "/v1/chat/completions" and event["tags"]["request_id"]
    assert "private words" not in json.dumps(event)
