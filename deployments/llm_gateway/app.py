"""HTTP surface of the gateway: ``/v1/*`` inference, ``/health``, ``/metrics`` and the control plane.

Routes live in ``deployments.llm_gateway.routes``, one module-level ``APIRouter`` per
resource; this module attaches the replica's ``GatewayState``, ties its background work
(``lifecycle``) to the app's lifespan, applies the guards known only at build time, and
renders every error in the one error shape (``errors.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from deployments.llm_gateway import lifecycle
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.control_audit import ControlAudit
from deployments.llm_gateway.errors import GatewayError, error_body, error_response
from deployments.llm_gateway.routes import admin, auth, health, inference, keys, metrics, models, registry, spend, ui
from deployments.llm_gateway.state import GatewayState, Listener
from deployments.llm_gateway.tracing import TracingMiddleware
from rayfleet.appstate import attach
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers
from rayfleet.http import RequestIdMiddleware


def _render(request: Request, status: int, message: str, headers: Mapping[str, str] | None) -> Response:
    return JSONResponse(error_body(status, message), status_code=status, headers=headers)


def _install_errors(app: FastAPI, state: GatewayState) -> None:
    def gateway_error(request: Request, exc: GatewayError) -> Response:
        if exc.status == 401 or exc.code == "wrong_key_scope":
            state.notices.auth_failure(exc.error_class)
        return error_response(exc)

    def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _render(request, exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    def validation(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return _render(request, 422, f"{where}: {first.get('msg', 'invalid request')}", None)

    install_error_handlers(
        app,
        _render,
        component="llm_gateway",
        handlers={GatewayError: gateway_error},
        http=http_error,
        validation=validation,
        internal_message="Internal error",
    )


def create_app(
    config: GatewayConfig,
    state: GatewayState | None = None,
    *,
    replicas: int | None = None,
    listener: Listener | None = None,
) -> FastAPI:
    """Build the app of one replica. ``state`` defaults to ``GatewayState.from_ray(config)`` (the named
    actors, or their in-process stand-ins); ``replicas`` splits the admission limits.

    ``listener`` is what ``/health`` reports about the direct listener (``rayfleet.direct.ActiveView``).
    """
    state = state or GatewayState.from_ray(config, replicas=replicas)
    if listener is not None:
        state.listener = listener

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await lifecycle.start(state)
        yield
        await lifecycle.stop(state)

    app = FastAPI(title="rayfleet LLM gateway", version="1.0", lifespan=lifespan)
    attach(app, state)
    if state.stores.tracer.active:  # off: no middleware at all
        app.add_middleware(TracingMiddleware, tracer=state.stores.tracer)
    if state.stores.audit is not None:
        app.add_middleware(ControlAudit, trail=state.stores.audit)
    app.add_middleware(RequestIdMiddleware)  # outside the tracing, so spans carry the request id
    _install_errors(app, state)
    admin_only = [Depends(state.access.guard)]
    app.include_router(inference.router)
    app.include_router(models.router, dependencies=[Depends(state.inference_guard)])
    app.include_router(spend.holder_router, dependencies=[Depends(state.inference_guard)])
    app.include_router(health.router)
    app.include_router(metrics.router, dependencies=admin_only)
    app.include_router(registry.router, dependencies=admin_only)
    app.include_router(keys.router, dependencies=admin_only)
    app.include_router(spend.router, dependencies=admin_only)
    app.include_router(admin.router, dependencies=admin_only)
    app.include_router(auth.router)
    app.include_router(ui.router)
    use_local_docs_assets(app)
    return app
