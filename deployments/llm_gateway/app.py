"""HTTP surface of the gateway: ``/v1/*`` inference, ``/health``, ``/metrics`` and the control plane."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from deployments.llm_gateway.auth import Authenticator
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.errors import GatewayError, error_body, error_response
from deployments.llm_gateway.gateway import KINDS, Gateway
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.registry_api import install as install_registry
from rayfleet.docs import use_local_docs_assets
from rayfleet.http import RequestIdMiddleware, request_id
from rayfleet.metrics import CONTENT_TYPE


def create_app(
    config: GatewayConfig, state: dict[str, Any] | None = None, replicas: int | None = None, listener: Any = None
) -> FastAPI:
    """Build the app. ``state`` may hold ``breakers``/``budget``/``ratelimit``/``metrics`` handles;
    missing ones are the named actors (or their in-process stand-ins).

    ``listener`` is what ``/health`` reports about the direct listener: an object with
    ``view() -> dict`` and, when it runs a background task, ``start()``/``close()``
    coroutines tied to the app's lifespan (``deployments.llm_gateway.listener``).
    """
    if replicas is None:
        replicas = int(os.environ.get("LLM_GATEWAY_REPLICAS", "1") or 1)
    gateway = Gateway(config, state, replicas=replicas)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await gateway.start()
        if hasattr(listener, "start"):
            await listener.start()
        yield
        if hasattr(listener, "close"):
            await listener.close()
        await gateway.close()

    app = FastAPI(title="rayfleet LLM gateway", version="1.0", lifespan=lifespan)
    app.state.gateway = gateway
    app.add_middleware(RequestIdMiddleware)

    @app.exception_handler(GatewayError)
    async def _gateway_error(request: Request, exc: GatewayError) -> JSONResponse:
        if exc.status in (401, 403):
            gateway.metrics.auth_failures.labels(reason=exc.error_class).inc()
        return error_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            error_body(exc.status_code, str(exc.detail)),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return JSONResponse(error_body(422, f"{where}: {first.get('msg', 'invalid request')}"), status_code=422)

    def admin(request: Request) -> None:
        gateway.auth.check(Authenticator.extract(request.headers), "admin")

    async def infer(request: Request, route: str) -> Response:
        ctx = Context(request=request, route=route, kind=KINDS[route], request_id=request_id(request))
        return await gateway.handle(ctx)

    @app.post("/v1/chat/completions", tags=["inference"])
    async def chat_completions(request: Request) -> Response:
        """OpenAI chat completions, streaming (SSE) or not."""
        return await infer(request, "/v1/chat/completions")

    @app.post("/v1/completions", tags=["inference"])
    async def completions(request: Request) -> Response:
        """OpenAI legacy text completions, streaming (SSE) or not."""
        return await infer(request, "/v1/completions")

    @app.post("/v1/embeddings", tags=["inference"])
    async def embeddings(request: Request) -> Response:
        """OpenAI embeddings."""
        return await infer(request, "/v1/embeddings")

    @app.get("/v1/models", tags=["inference"])
    async def models(request: Request) -> JSONResponse:
        """Served models, model aliases and model groups."""
        await gateway.start()
        gateway.auth.check(Authenticator.extract(request.headers), "inference")
        return JSONResponse({"object": "list", "data": gateway.router.list_models()})

    @app.get("/health", tags=["operations"])
    async def health() -> JSONResponse:
        """Liveness and a read-only view of endpoints and breakers (never consumes a probe)."""
        await gateway.start()
        endpoints = []
        for name, ep in gateway.router.endpoints.items():
            view = gateway.breakers.states.get(name) or {"state": "CLOSED", "failures": 0}
            endpoints.append(
                {
                    "name": name,
                    "provider": ep.provider,
                    "base_url": ep.base_url,
                    "models": ep.models,
                    "circuit_state": view["state"],
                    "failure_count": view.get("failures", 0),
                    "keys": len(gateway.router.keyrings.get(name).keys) if gateway.router.keyrings.get(name) else 0,
                }
            )
        warnings = list(gateway.auth.warnings)
        if gateway.discovery_done and not gateway.discovered and gateway.config.discovery:
            warnings.append(
                "no local model server found on ports 11434 (Ollama), 1234 (LM Studio), 8080 (llama.cpp), 8001 (vLLM)"
            )
        if not gateway.router.endpoints:
            warnings.append("no upstream endpoint configured: add one under endpoints in config/llm_gateway.yaml")
        healthy = any(e["circuit_state"] != "OPEN" for e in endpoints)
        return JSONResponse(
            {
                "status": "ok" if healthy else "degraded",
                "endpoints": endpoints,
                "local_servers": [
                    {"name": s.name, "base_url": s.base_url, "models": s.models} for s in gateway.discovered
                ],
                "discovery": "done" if gateway.discovery_done else "running",
                "admission": {
                    "max_in_flight": gateway.admission.max_in_flight,
                    "in_flight": gateway.admission.in_flight,
                    "max_queued": gateway.admission.max_queued,
                    "queued": gateway.admission.queued,
                },
                "records_store": "ok" if gateway.records.healthy else "unavailable",
                "listener": listener.view() if listener is not None else {"enabled": False},
                "warnings": warnings,
            }
        )

    @app.get("/metrics", tags=["operations"])
    async def metrics(request: Request) -> Response:
        """Cluster-wide metrics in Prometheus text format (admin key)."""
        admin(request)
        await gateway.start()
        await gateway.budget.flush()
        return Response(await gateway.metrics_client.render(), media_type=CONTENT_TYPE)

    @app.post("/api/v1/circuit-breaker/{id}/reset", tags=["control plane"])
    async def reset_breaker(id: str, request: Request) -> JSONResponse:
        """Force the endpoint's breaker to CLOSED."""
        endpoint_id = id
        admin(request)
        await gateway.start()
        if endpoint_id not in gateway.router.endpoints:
            raise GatewayError(404, f"Unknown endpoint {endpoint_id!r}", code="endpoint_not_found")
        view = await gateway.breaker_handle.reset.remote(endpoint_id)
        gateway.breakers.states[endpoint_id] = view
        gateway.metrics.circuit.labels(endpoint=endpoint_id).set(0.0)
        return JSONResponse({"id": endpoint_id, "circuit_state": view["state"], "failure_count": view["failures"]})

    install_registry(app, gateway, admin)

    @app.get("/api/v1/metrics/latency", tags=["control plane"])
    async def latency(request: Request) -> JSONResponse:
        """Per-ring and per-stage latency percentiles (ms) of the answering replica."""
        admin(request)
        return JSONResponse(gateway.ring_stats.latency())

    @app.get("/api/v1/metrics/ring-timeline", tags=["control plane"])
    async def ring_timeline(request: Request) -> JSONResponse:
        """The last 20 requests of the answering replica, with per-ring breakdown."""
        admin(request)
        return JSONResponse({"traces": gateway.ring_stats.timeline()})

    use_local_docs_assets(app)
    return app
