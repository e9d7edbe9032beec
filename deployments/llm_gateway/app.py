"""HTTP surface of the gateway: ``/v1/*`` inference, ``/health``, ``/metrics`` and the control plane.

Routes live in ``deployments.llm_gateway.routes``, one ``APIRouter`` per resource; this
module builds the gateway, ties it to the app's lifespan and renders every error in the
one error shape (``errors.py``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.errors import GatewayError, error_body, error_response
from deployments.llm_gateway.gateway import Gateway
from deployments.llm_gateway.routes import admin, auth, health, inference, metrics, models, registry, ui
from deployments.llm_gateway.tracing import TracingMiddleware
from rayfleet.docs import use_local_docs_assets
from rayfleet.http import RequestIdMiddleware


def _error_handlers(app: FastAPI, gateway: Gateway) -> None:
    @app.exception_handler(GatewayError)
    async def _gateway_error(request: Request, exc: GatewayError) -> JSONResponse:
        if exc.status == 401 or exc.code == "wrong_key_scope":
            gateway.note_auth_failure(exc.error_class)
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


def create_app(
    config: GatewayConfig, state: dict[str, Any] | None = None, replicas: int | None = None, listener: Any = None
) -> FastAPI:
    """Build the app. ``state`` may hold the actor handles (``breakers``, ``budget``, ``ratelimit``,
    ``registry``, ``control``, ``threats``, ``latency``) and ``metrics``; missing ones are the named
    actors (or their in-process stand-ins).

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
    if gateway.tracer.active:  # off: no middleware at all
        app.add_middleware(TracingMiddleware, tracer=gateway.tracer)
    app.add_middleware(RequestIdMiddleware)  # outside the tracing, so spans carry the request id
    _error_handlers(app, gateway)
    app.include_router(inference.router(gateway))
    app.include_router(models.router(gateway))
    app.include_router(health.router(gateway, listener))
    app.include_router(metrics.router(gateway))
    app.include_router(registry.router(gateway))
    app.include_router(admin.router(gateway))
    app.include_router(auth.router(gateway.access))
    app.include_router(ui.router())
    use_local_docs_assets(app)
    return app
