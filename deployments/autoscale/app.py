"""The autoscale API (spec 000 §B) as an ASGI app: `create_app(config, state) -> FastAPI`.

Public: `GET /metrics` (no key, no limit), `GET /health/check` (no key; rate
limited per client address except loopback). Protected (`X-API-Key`, 401
missing, 403 wrong, rate limited): `/resource/{lxc,vm}/{config,status}`,
`/scale/cores`, `/scale/ram`, `/scale/storage/increase`.

With the default state (under Serve) the app also makes sure the fleet's
background actors run: one monitor per host and the scaling model (named
actors, created once whichever replica starts first).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.params import Depends as DependsParam

from rayfleet.appstate import attach
from rayfleet.auth import api_key_guard
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers
from rayfleet.http import BodyLimitMiddleware
from rayfleet.logs import register_secret
from rayfleet.staticpage import page_router
from rayfleet.tasks import BackgroundTasks

from .background import ensure_background
from .config import AutoscaleConfig
from .errors import ApiError, ErrorBody, api_error, error_response, http_error, request_invalid
from .routes import decisions, public, resource, scale
from .routes.common import rate_limited
from .state import AutoscaleState
from .telemetry import RequestMetrics

MAX_BODY = 16 * 1024
BACKGROUND_RECHECK = 15.0  # seconds between a replica's checks that the monitors and the model run
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "validation failed"},
    401: {"model": ErrorBody, "description": "missing X-API-Key"},
    403: {"model": ErrorBody, "description": "wrong X-API-Key"},
    404: {"model": ErrorBody, "description": "container not found on any host"},
    413: {"model": ErrorBody, "description": f"request body over {MAX_BODY} bytes (refused before it is read)"},
    429: {"model": ErrorBody, "description": "rate limited (see Retry-After)"},
    500: {"model": ErrorBody, "description": "the pct command failed"},
}


def _protection(config: AutoscaleConfig) -> Sequence[DependsParam]:
    """The API key (when auth is on), then the rate limit: what every `/resource` and `/scale` route depends on."""
    protected = [Depends(rate_limited)]
    if not config.auth.enabled:
        return protected
    keys = config.auth.keys()

    def failure(request: Request, status: int, message: str) -> Exception:
        return ApiError(status, "Missing API key" if status == 401 else "Invalid API key")

    return [Depends(api_key_guard(lambda: keys, on_failure=failure, component="autoscale")), *protected]


def create_app(config: AutoscaleConfig, state: AutoscaleState | None = None) -> FastAPI:
    """Without `state`, `AutoscaleState.from_ray(config)`, which also starts the background actors."""
    keys = config.auth.keys()
    for key in keys:
        register_secret(key)
    shared = state or AutoscaleState.from_ray(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks = BackgroundTasks("autoscale")
        if shared.background:
            await ensure_background(config)
            # Ray restarts a lost monitor or scaler actor from its constructor, which does not start
            # its loop: every replica starts them again (idempotent) until it stops.
            tasks.every(BACKGROUND_RECHECK, lambda: ensure_background(config), name="autoscale-background")
        yield
        await tasks.stop()
        await shared.fleet.close()

    app = FastAPI(title="rayfleet autoscale API", version="1", lifespan=lifespan, responses=ERRORS)
    attach(app, shared)
    install_error_handlers(
        app,
        lambda request, status, message, headers: error_response(status, message, headers=headers),
        component="autoscale",
        handlers={ApiError: api_error},
        validation=request_invalid,
        http=http_error,
        internal_message="Internal server error",
    )
    use_local_docs_assets(app)
    app.include_router(public.router)
    app.include_router(page_router("deployments.autoscale"))  # the page: no key (its data routes need one)
    # bodies here are a few fields: anything larger is refused before it is read or parsed
    app.add_middleware(
        BodyLimitMiddleware,
        limit=MAX_BODY,
        refuse=lambda limit: error_response(413, f"Request body over {limit} bytes"),
    )
    protected = list(_protection(config))
    app.include_router(resource.router, dependencies=protected)
    app.include_router(scale.router, dependencies=protected)
    app.include_router(decisions.router, dependencies=protected)
    app.add_middleware(RequestMetrics, metrics=shared.metrics)
    return app
