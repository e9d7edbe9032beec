"""The ASN lookup API (spec 002 §G) as an ASGI app: `create_app(config, state) -> FastAPI`.

Public: /api/, /api/health, /api/docs, /api/redoc, /api/openapi.json.
Protected (`X-API-Key`): /api/v1/asn/{asn}, /api/v1/ip/{address}, /api/v1/search.
Behind Serve the app is mounted at /asn; the docs pages read the ASGI root_path,
so they load the specification from /asn/api/openapi.json.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from fastapi import APIRouter, FastAPI, Path, Query, Request, Security
from starlette.responses import JSONResponse, Response

from actors.rate_limit import RateLimitWindow
from deployments.asn import schemas
from deployments.asn.config import AsnConfig, validate_api_key
from deployments.asn.errors import ApiError, install_handlers, new_request_id
from deployments.asn.guard import GuardMiddleware
from deployments.asn.holder import DatasetHolder
from deployments.asn.limiter import ActorLimiter, Limiter, RedisLimiter
from deployments.asn.parsing import parse_asn, parse_ip
from rayfleet import state as rf_state
from rayfleet.auth import api_key_guard
from rayfleet.docs import use_local_docs_assets
from rayfleet.etag import none_match, quote
from rayfleet.http import RequestIdMiddleware, parse_networks
from rayfleet.logs import get_logger, register_secret

log = get_logger("asn")

try:
    VERSION = metadata.version("rayfleet")
except metadata.PackageNotFoundError:  # running from a source tree without installing
    VERSION = "0.0.0"

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": schemas.ErrorBody, "description": "malformed input"},
    403: {"model": schemas.ErrorBody, "description": "missing or invalid X-API-Key"},
    404: {"model": schemas.ErrorBody, "description": "not in the dataset"},
    429: {"model": schemas.ErrorBody, "description": "rate limit exceeded (see Retry-After)"},
    503: {"model": schemas.ErrorBody, "description": "dataset still loading or unavailable"},
}
PUBLIC_ROUTES = ["/api/", "/api/health", "/api/docs", "/api/redoc", "/api/openapi.json"]
PROTECTED_ROUTES = [
    "/api/v1/asn/{asn}",
    "/api/v1/ip/{address}",
    "/api/v1/search?q=&country=&limit=",
    "/api/v1/country/{country}/prefixes?family=",
]


def build_limiter(config: AsnConfig, state: Mapping[str, Any] | None) -> Limiter:
    """Redis Lua limiter when a Redis URL is configured, else the shared named actor."""
    rate = config.rate_limit
    if rate.redis_url:
        return RedisLimiter(
            rate.redis_url,
            rate.limit,
            rate.window_seconds,
            key_prefix=rate.key_prefix,
            on_store_error=rate.on_store_error,
            retry_interval=rate.redis_retry_interval,
        )
    handle = (state or {}).get("rate_limit") or rf_state.actor(RateLimitWindow, rate.actor_name)
    return ActorLimiter(handle, rate.limit, rate.window_seconds)


def create_app(config: AsnConfig, state: Mapping[str, Any] | None = None) -> FastAPI:
    """Build the app. Raises ConfigError when API_SECRET_KEY is missing or too short.

    `state` may carry `rate_limit` (an actor handle) and `dataset` (a DatasetHolder);
    by default the named actor and a background-loaded dataset are used.
    """
    api_key = validate_api_key(config.api_key)
    register_secret(api_key)
    holder: DatasetHolder = (state or {}).get("dataset") or DatasetHolder(
        config.db_path, config.package_dir, config.prefix_file, config.fetch_on_start
    ).start()
    limiter = build_limiter(config, state)

    app = FastAPI(
        title="ASN lookup API",
        version=VERSION,
        description=(
            "AS number and IP-to-AS lookups over a historical routing snapshot (see `dataset` in every "
            "response). Protected routes need the `X-API-Key` header. Every request counts against a "
            f"per-client-IP limit of {config.rate_limit.limit} per {config.rate_limit.window_seconds:g} s."
        ),
        docs_url="/api/docs",
        redoc_url="/api/redoc",
        openapi_url="/api/openapi.json",
    )
    app.state.config = config
    app.state.dataset = holder
    app.state.limiter = limiter
    install_handlers(app)
    app.add_middleware(
        GuardMiddleware,
        limiter=limiter,
        trusted_proxies=parse_networks(config.trusted_proxies),
        on_store_error=config.rate_limit.on_store_error,
        unavailable_retry_after=max(1, int(config.rate_limit.redis_retry_interval + 0.999)),
    )
    app.add_middleware(RequestIdMiddleware, generator=new_request_id, trust_incoming=False)

    require_key = api_key_guard(
        [api_key],
        on_failure=lambda _request, status, message: ApiError(status, message),
        component="asn",
        missing_status=403,
        missing_message="Invalid or missing API key",
        wrong_message="Invalid or missing API key",
        trusted_proxies=parse_networks(config.trusted_proxies),
        description="the master key (API_SECRET_KEY)",
    )

    def store():
        if holder.store is None:
            message = "dataset unavailable" if holder.phase == "failed" else f"dataset is loading ({holder.phase})"
            raise ApiError(503, message, headers={"Retry-After": "5"})
        return holder.store

    _add_public_routes(app, config, holder, limiter)
    app.include_router(_protected_router(config, store, require_key))

    use_local_docs_assets(app)
    return app


def _add_public_routes(app: FastAPI, config: AsnConfig, holder: DatasetHolder, limiter: Limiter) -> None:
    @app.get("/api/", tags=["public"], summary="Service information")
    async def root(request: Request) -> dict[str, Any]:
        base = request.scope.get("root_path", "").rstrip("/")
        return {
            "service": "asn",
            "name": "ASN lookup API",
            "version": VERSION,
            "docs": f"{base}/api/docs",
            "redoc": f"{base}/api/redoc",
            "openapi": f"{base}/api/openapi.json",
            "endpoints": {
                "public": [f"{base}{p}" for p in PUBLIC_ROUTES],
                "protected": [f"{base}{p}" for p in PROTECTED_ROUTES],
            },
            "authentication": "header X-API-Key",
            "client_ip": request.scope.get("state", {}).get("client_ip"),
            "rate_limit": {"limit": config.rate_limit.limit, "window_seconds": config.rate_limit.window_seconds},
            "dataset": holder.store.dataset() if holder.store else None,
        }

    @app.get(
        "/api/health",
        tags=["public"],
        summary="Health of each dependency",
        response_model=schemas.Health,
        responses={503: {"model": schemas.Health, "description": "a dependency is down"}},
    )
    async def health() -> JSONResponse:
        dataset_status, store_status = await asyncio.gather(_dataset_health(holder), _store_health(limiter))
        store_key = "redis" if config.rate_limit.redis_url else "rate_limit_actor"
        dependencies = {"dataset": dataset_status, store_key: store_status}
        healthy = all(d["status"] == "up" for d in dependencies.values())
        body = {
            "status": "healthy" if healthy else "degraded",
            "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
            "version": VERSION,
            "dependencies": dependencies,
        }
        return JSONResponse(body, status_code=200 if healthy else 503)


async def _dataset_health(holder: DatasetHolder) -> dict[str, Any]:
    if holder.store is None:
        status = "down" if holder.phase == "failed" else "loading"
        return {"status": status, "phase": holder.phase, "error": holder.error}
    try:
        rows = holder.store.counts()
    except Exception as exc:  # the file became unreadable after loading
        return {"status": "down", "phase": holder.phase, "error": type(exc).__name__}
    ok = rows["asn"] > 0 and rows["prefix"] > 0
    return {
        "status": "up" if ok else "down",
        "rows": rows,
        "dataset": holder.store.dataset(),
        "load_seconds": holder.load_seconds,
    }


async def _store_health(limiter: Limiter) -> dict[str, Any]:
    try:
        return await asyncio.wait_for(limiter.ping(), timeout=2.0)
    except TimeoutError:
        return {"status": "down", "error": "timeout"}


def _etag(store: Any, key: str) -> str:
    """The opaque tag of one record in this dataset (unquoted)."""
    return hashlib.sha1(f"{store.meta.get('source_fingerprint')}|{key}".encode()).hexdigest()[:16]


def _protected_router(config: AsnConfig, store: Any, require_key: Any) -> APIRouter:
    router = APIRouter(prefix="/api/v1", tags=["lookup"], dependencies=[Security(require_key)], responses=ERRORS)
    cache_control = "private, max-age=3600"

    @router.get(
        "/asn/{asn}",
        summary="Look up an AS number",
        response_model=schemas.AsnRecord,
        description="`15169`, `AS15169`, `as15169` or asdot `1.10`. Unknown numbers give 404.",
    )
    async def get_asn(asn: str, request: Request) -> Response:
        try:
            number = parse_asn(asn)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        db = store()
        etag = _etag(db, f"asn:{number}")
        headers = {"ETag": quote(etag), "Cache-Control": cache_control}
        if none_match(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        record = db.get_asn(number)
        if record is None:
            raise ApiError(404, f"AS{number} is not in the dataset")
        return JSONResponse({**record, "dataset": db.dataset()}, headers=headers)

    @router.get(
        "/ip/{address}",
        summary="AS number announcing an IP address (longest-prefix match)",
        response_model=schemas.IpRecord,
    )
    async def get_ip(address: str) -> JSONResponse:
        try:
            family, value, canonical = parse_ip(address)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        db = store()
        match = db.match_ip(family, value)
        if match is None:
            raise ApiError(404, f"no announced prefix covers {canonical} in the dataset")
        summary = db.summary(match.asn) or {"asn": match.asn}
        body = {
            "ip": canonical,
            "family": family,
            "prefix": match.prefix,
            **summary,
            "asn_text": f"AS{match.asn}",
            "dataset": db.dataset(),
        }
        return JSONResponse(body, headers={"Cache-Control": cache_control})

    @router.get(
        "/country/{country}/prefixes",
        summary="Every prefix announced by ASes registered in a country",
        response_model=schemas.CountryPrefixes,
        description=(
            "Prefix → AS → the AS's registration country from the AS names list. Other components "
            "(mitigation geo_block, web filter geo import) build their country filters from this."
        ),
    )
    async def country_prefixes(
        country: str = Path(..., pattern="^[A-Za-z]{2}$", description="ISO 3166 code"),
        family: int | None = Query(None, ge=4, le=6, description="4 or 6; both when absent"),
    ) -> JSONResponse:
        if family not in (None, 4, 6):
            raise ApiError(400, "family must be 4 or 6")
        db = store()
        code = country.upper()
        prefixes = await asyncio.to_thread(db.country_prefixes, code, family)
        body = {
            "country": code,
            "family": family,
            "count": len(prefixes),
            "prefixes": prefixes,
            "source": "prefix -> origin AS -> AS registration country (AS names list)",
            "dataset": db.dataset(),
        }
        return JSONResponse(body, headers={"Cache-Control": cache_control})

    @router.get("/search", summary="Search AS numbers by name or organisation", response_model=schemas.SearchResult)
    async def search(
        q: str = Query(..., min_length=2, max_length=100, description="case-insensitive substring"),
        country: str | None = Query(None, pattern="^[A-Za-z]{2}$", description="ISO 3166 code"),
        limit: int = Query(20, ge=1, le=config.search_max_results),
    ) -> JSONResponse:
        db = store()
        code = country.upper() if country else None
        results = db.search(q.strip(), code, limit)
        return JSONResponse(
            {"query": q, "country": code, "count": len(results), "results": results, "dataset": db.dataset()}
        )

    return router
