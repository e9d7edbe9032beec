"""The autoscale API (spec 000 §B) as an ASGI app: `create_app(config, state) -> FastAPI`.

Public: `GET /metrics` (no key, no limit), `GET /health/check` (no key; rate
limited per client address except loopback). Protected (`X-API-Key`, 401
missing, 403 wrong, rate limited): `/resource/{lxc,vm}/{config,status}`,
`/scale/cores`, `/scale/ram`, `/scale/storage/increase`.

With `state=None` (under Serve) the app also makes sure the fleet's background
actors run: one monitor per host and the scaling model (named actors, created
once whichever replica starts first).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import Depends, FastAPI, Request
from starlette.responses import JSONResponse, Response

from actors.rate_limit import RateLimitWindow
from rayfleet import state as rf_state
from rayfleet.auth import api_key_guard
from rayfleet.docs import use_local_docs_assets
from rayfleet.http import BodyLimitMiddleware
from rayfleet.logs import get_logger, register_secret

from .config import AutoscaleConfig
from .errors import ApiError, ErrorBody, error_response, install_handlers
from .fleet import Fleet
from .routes import resource_router, scale_router
from .schemas import HealthBody
from .telemetry import ApiMetrics, RequestMetrics, metrics_library_available

log = get_logger("autoscale")
LOOPBACK = ("127.", "::1")
MAX_BODY = 16 * 1024
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "validation failed"},
    401: {"model": ErrorBody, "description": "missing X-API-Key"},
    403: {"model": ErrorBody, "description": "wrong X-API-Key"},
    404: {"model": ErrorBody, "description": "container not found on any host"},
    413: {"model": ErrorBody, "description": f"request body over {MAX_BODY} bytes (refused before it is read)"},
    429: {"model": ErrorBody, "description": "rate limited (see Retry-After)"},
    500: {"model": ErrorBody, "description": "the pct command failed"},
}


class HealthProbe:
    """`pct list` on every host over SSH, cached for `ttl` seconds."""

    def __init__(self, fleet: Fleet, ttl: float) -> None:
        self.fleet = fleet
        self.ttl = ttl
        self._at = -1e9
        self._value: tuple[bool, str] = (False, "not probed")
        self._lock = asyncio.Lock()

    async def check(self) -> tuple[bool, str]:
        async with self._lock:
            if time.monotonic() - self._at >= self.ttl:
                results = await self.fleet.list_all()
                failed = [f"{h}: {(r.stderr.strip() or f'rc {r.rc}')[:200]}" for h, r in results.items() if not r.ok]
                self._value = (not failed, "; ".join(failed) or "ok")
                self._at = time.monotonic()
            return self._value


def _limiter(config: AutoscaleConfig, state: Mapping[str, Any] | None) -> Any:
    rate = config.rate_limit
    handle = (state or {}).get("rate_limit") or rf_state.actor(RateLimitWindow, rate.actor_name)

    async def limit(request: Request) -> None:
        if not rate.enabled:
            return
        ip = request.client.host if request.client else "unknown"
        if rate.exempt_loopback and ip.startswith(LOOPBACK):
            return
        decision = await handle.hit.remote(f"autoscale:{ip}", rate.max_requests_per_minute, rate.time_window_seconds)
        headers = {
            "X-RateLimit-Limit": str(decision.limit),
            "X-RateLimit-Remaining": str(decision.remaining),
            "X-RateLimit-Reset": str(decision.reset_epoch),
        }
        if not decision.allowed:
            raise ApiError(429, "Rate limit exceeded", headers={**headers, "Retry-After": str(decision.retry_after)})

    return limit


def create_app(config: AutoscaleConfig, state: Mapping[str, Any] | None = None) -> FastAPI:
    """`state` may carry `fleet`, `metrics` (an ApiMetrics) and `rate_limit` (an actor handle)."""
    keys = config.auth.keys()
    for key in keys:
        register_secret(key)
    fleet: Fleet = (state or {}).get("fleet") or Fleet(config)
    metrics: ApiMetrics = (state or {}).get("metrics") or ApiMetrics()
    probe = HealthProbe(fleet, config.health_cache_seconds)
    limit = _limiter(config, state)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if state is None:
            from .background import ensure_background

            await ensure_background(config)
        yield
        await fleet.close()

    app = FastAPI(title="rayfleet autoscale API", version="1", lifespan=lifespan, responses=ERRORS)
    install_handlers(app)
    use_local_docs_assets(app)

    def failure(request: Request, status: int, message: str) -> Exception:
        return ApiError(status, "Missing API key" if status == 401 else "Invalid API key")

    protected = [Depends(limit)]
    if config.auth.enabled:
        protected.insert(0, Depends(api_key_guard(lambda: keys, on_failure=failure, component="autoscale")))

    @app.get(
        "/metrics",
        tags=["public"],
        summary="Prometheus text exposition (cluster-wide)",
        response_class=Response,
        responses={501: {"model": ErrorBody, "description": "the prometheus_client library is not installed"}},
    )
    async def scrape() -> Response:
        if not metrics_library_available():
            return JSONResponse(
                {
                    "status": "error",
                    "message": "Metrics are unavailable: the prometheus_client library is not installed",
                },
                status_code=501,
            )
        from rayfleet.metrics import CONTENT_TYPE

        return Response(await metrics.registry.render(), media_type=CONTENT_TYPE)

    @app.get(
        "/health/check",
        tags=["public"],
        response_model=HealthBody,
        responses={503: {"model": HealthBody}},
        dependencies=[Depends(limit)],
        summary="`pct list` on every host (cached)",
    )
    async def health() -> JSONResponse:
        ok, detail = await probe.check()
        body = {"status": "healthy" if ok else "unhealthy", "checks": {"lxc_commands": {"ok": ok, "detail": detail}}}
        return JSONResponse(body, status_code=200 if ok else 503)

    # bodies here are a few fields: anything larger is refused before it is read or parsed
    app.add_middleware(
        BodyLimitMiddleware,
        limit=MAX_BODY,
        refuse=lambda limit: error_response(413, f"Request body over {limit} bytes"),
    )
    app.include_router(resource_router(fleet, metrics), dependencies=protected)
    app.include_router(scale_router(fleet, metrics), dependencies=protected)
    app.add_middleware(RequestMetrics, metrics=metrics)
    return app
