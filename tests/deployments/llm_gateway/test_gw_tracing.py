"""Tracing: each ``/v1/*`` request becomes an OpenTelemetry trace exported over OTLP/HTTP to a
real receiver on loopback (decoded with the OTLP protobuf schema)."""

from __future__ import annotations

import asyncio

import uvicorn
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import base_config, chat


def _value(attr):
    which = attr.value.WhichOneof("value")
    return getattr(attr.value, which) if which else None


async def test_requests_are_exported_over_otlp(serve, up1, tmp_path, auth_env):
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
    while not receiver.started:
        await asyncio.sleep(0.01)
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["m"]}},
        observability={"tracing": {"otlp_endpoint": f"http://127.0.0.1:{port}", "service_name": "gw-test"}},
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        assert (await c.post("/v1/chat/completions", json=chat("nope"))).status_code == 404
    await asyncio.to_thread(gw.gateway.tracer.provider.force_flush)
    for _ in range(100):
        if len([s for s in spans if not s["parent"]]) >= 2:
            break
        await asyncio.sleep(0.05)
    receiver.should_exit = True
    await task
    assert services == {"gw-test"}
    roots = [s for s in spans if not s["parent"]]
    assert [r["name"] for r in roots] == ["POST /v1/chat/completions"] * 2
    ok, missing = sorted(roots, key=lambda r: r["attrs"]["http.response.status_code"])
    assert ok["attrs"]["http.response.status_code"] == 200 and ok["attrs"]["rayfleet.endpoint"] == "a"
    assert ok["attrs"]["gen_ai.usage.input_tokens"] > 0
    assert missing["attrs"]["http.response.status_code"] == 404 and missing["attrs"]["error.type"]
    rings = [s for s in spans if s["parent"] == ok["id"]]
    assert {s["name"] for s in rings} >= {"INGRESS", "PRE_FLIGHT", "ROUTING", "POST_FLIGHT", "BACKGROUND"}
    assert all(s["trace"] == ok["trace"] for s in rings)
    assert "rayfleet.plugin.injection_scan_ms" in next(s for s in rings if s["name"] == "PRE_FLIGHT")["attrs"]


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
    while not receiver.started:
        await asyncio.sleep(0.01)
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
    for _ in range(100):
        if events:
            break
        await asyncio.sleep(0.05)
    receiver.should_exit = True
    await task
    import sentry_sdk

    sentry_sdk.get_client().close()
    assert len(events) == 1
    event = events[0]
    assert event["exception"]["values"][-1]["type"] == "RuntimeError"
    assert event["tags"]["route"] == "/v1/chat/completions" and event["tags"]["request_id"]
    assert "private words" not in json.dumps(event)
