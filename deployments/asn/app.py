"""The ASN lookup API (spec 002 §G) as an ASGI app: `create_app(config, state) -> FastAPI`.

Public: /api/, /api/health, /api/docs, /api/redoc, /api/openapi.json.
Protected (`X-API-Key`): /api/v1/asn/{asn}, /api/v1/ip/{address}, /api/v1/search,
/api/v1/country/{country}/prefixes. Behind Serve the app is mounted at /asn; the docs
pages read the ASGI root_path, so they load the specification from /asn/api/openapi.json.
The routes live in `routes/` (one module per resource); they share `AsnState` (state.py).
"""

from __future__ import annotations

from fastapi import Depends, FastAPI, Security

from deployments.asn.config import AsnConfig, validate_api_key
from deployments.asn.errors import ApiError, api_error, http_error, new_request_id, render, validation_error
from deployments.asn.guard import GuardMiddleware
from deployments.asn.routes import lookup, public, search
from deployments.asn.routes.common import VERSION
from deployments.asn.state import AsnState
from rayfleet.appstate import attach
from rayfleet.auth import api_key_guard
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers
from rayfleet.http import RequestIdMiddleware, parse_networks
from rayfleet.logs import register_secret


def create_app(config: AsnConfig, state: AsnState | None = None) -> FastAPI:
    """Build the app. Raises ConfigError when API_SECRET_KEY is missing or too short.

    By default (``AsnState.from_ray``) the dataset loads in the background and the
    limiter is Redis when configured, else the named actor.
    """
    api_key = validate_api_key(config.api_key)
    register_secret(api_key)
    state = state or AsnState.from_ray(config)
    rate = config.rate_limit
    app = FastAPI(
        title="ASN lookup API",
        version=VERSION,
        description=(
            "AS number and IP-to-AS lookups over a historical routing snapshot (see `dataset` in every "
            "response). Protected routes need the `X-API-Key` header. Every request counts against a "
            f"per-client-IP limit of {rate.limit} per {rate.window_seconds:g} s."
        ),
        docs_url="/api/docs",
        redoc_url="/api/redoc",
        openapi_url="/api/openapi.json",
    )
    attach(app, state)
    install_error_handlers(
        app, render, component="asn", handlers={ApiError: api_error}, http=http_error, validation=validation_error
    )
    app.add_middleware(
        GuardMiddleware,
        limiter=state.limiter,
        trusted_proxies=parse_networks(config.trusted_proxies),
        on_store_error=rate.on_store_error,
        unavailable_retry_after=max(1, int(rate.redis_retry_interval + 0.999)),
    )
    app.add_middleware(RequestIdMiddleware, generator=new_request_id, trust_incoming=False)

    require_key = Security(
        api_key_guard(
            [api_key],
            on_failure=lambda _request, status, message: ApiError(status, message),
            component="asn",
            missing_status=403,
            missing_message="Invalid or missing API key",
            wrong_message="Invalid or missing API key",
            trusted_proxies=parse_networks(config.trusted_proxies),
            description="the master key (API_SECRET_KEY)",
        )
    )
    app.include_router(public.router)
    app.include_router(lookup.router, dependencies=[require_key])
    app.include_router(
        search.router, dependencies=[require_key, Depends(search.search_params(config.search_max_results))]
    )
    use_local_docs_assets(app)
    return app
