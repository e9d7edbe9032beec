"""The mitigation fleet's HTTP surface (spec 002 §D): `create_app(config, state) -> FastAPI`.

Base URLs (behind Serve at /mitigation):
  orchestrator  /mitigation/api/v1/...                    nodes, policy, scale, threats (+ fleet rules, blacklist)
  node          /mitigation/nodes/<node_id>/api/v1/...    status, rules, blacklist, stats
  metrics       /mitigation/metrics (fleet), /mitigation/nodes/<node_id>/metrics (one node)
  dashboard     /mitigation/ (static/: the page asks for the key and calls the routes above)
Every route except /health and the dashboard's page and assets needs `X-Service-API-Key` (MANAGEMENT_API_KEY).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from starlette.routing import Mount

from deployments.mitigation.config import MitigationConfig, validate_api_key
from deployments.mitigation.errors import ApiError, api_error, http_error, render, too_large, validation_error
from deployments.mitigation.routes import fleet, node
from deployments.mitigation.state import MitigationState
from rayfleet.appstate import attach
from rayfleet.auth import api_key_guard
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers
from rayfleet.http import BodyLimitMiddleware
from rayfleet.logs import register_secret
from rayfleet.staticpage import page_router

API_KEY_HEADER = "X-Service-API-Key"


MAX_BODY_BYTES = 64 * 1024  # every request body here is a few fields


def _errors(app: FastAPI) -> None:
    install_error_handlers(
        app,
        render,
        component="mitigation",
        handlers={ApiError: api_error},
        validation=validation_error,
        http=http_error,
    )


def create_app(config: MitigationConfig, state: MitigationState | None = None) -> FastAPI:
    """Build the app. Raises ConfigError when MANAGEMENT_API_KEY is missing, short or an example key.

    `state` defaults to `MitigationState.from_ray(config)` (the named fleet actor).
    """
    key = validate_api_key(config.api_key)
    register_secret(key)
    if config.fleet.asn_api_key:
        register_secret(config.fleet.asn_api_key)
    component = state or MitigationState.from_ray(config)
    guard = Depends(
        api_key_guard(
            [key],
            header=API_KEY_HEADER,
            on_failure=lambda request, status, message: ApiError(status, message),
            component="mitigation",
        )
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await component.ready()
        yield

    app = FastAPI(
        title="Mitigation fleet",
        description=(
            "Mitigation nodes (HAProxy data planes run by Ray actors) and their orchestrator. "
            f"Every route except /health needs the `{API_KEY_HEADER}` header. Node APIs live under "
            "`/nodes/{node_id}` (see that prefix's own /docs)."
        ),
        lifespan=lifespan,
    )
    attach(app, component)
    _errors(app)
    app.add_middleware(BodyLimitMiddleware, limit=MAX_BODY_BYTES, refuse=too_large)
    app.include_router(fleet.public_router)
    app.include_router(page_router("deployments.mitigation"))  # the dashboard: no key (its data routes need one)
    app.include_router(fleet.router, dependencies=[guard])

    node_app = FastAPI(
        title="Mitigation node management API",
        description=f"One node's management API. Every route except /health needs `{API_KEY_HEADER}`.",
    )
    attach(node_app, component)
    _errors(node_app)
    node_app.include_router(node.public_router)
    node_app.include_router(node.router, dependencies=[guard])
    use_local_docs_assets(node_app)
    app.router.routes.append(Mount("/nodes/{node_id}", app=node_app))
    use_local_docs_assets(app)
    return app
