"""The mitigation fleet's HTTP surface (spec 002 §D): `create_app(config, state) -> FastAPI`.

Base URLs (behind Serve at /mitigation):
  orchestrator  /mitigation/api/v1/...                    nodes, policy, scale, threats (+ fleet rules, blacklist)
  node          /mitigation/nodes/<node_id>/api/v1/...    status, rules, blacklist, stats
  metrics       /mitigation/metrics (fleet), /mitigation/nodes/<node_id>/metrics (one node)
Every route except /health needs `X-Service-API-Key` (MANAGEMENT_API_KEY).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI
from starlette.routing import Mount

from actors.mitigation.fleet import MitigationFleet
from deployments.mitigation.config import MitigationConfig, validate_api_key
from deployments.mitigation.errors import ApiError, install_handlers, too_large
from deployments.mitigation.fleet_client import FleetClient
from deployments.mitigation.routes_fleet import fleet_router, public_router
from deployments.mitigation.routes_node import node_router
from rayfleet import state as rf_state
from rayfleet.auth import api_key_guard
from rayfleet.docs import use_local_docs_assets
from rayfleet.http import BodyLimitMiddleware
from rayfleet.logs import register_secret

API_KEY_HEADER = "X-Service-API-Key"


MAX_BODY_BYTES = 64 * 1024  # every request body here is a few fields


def create_app(config: MitigationConfig, state: Mapping[str, Any] | None = None) -> FastAPI:
    """Build the app. Raises ConfigError when MANAGEMENT_API_KEY is missing, short or an example key.

    `state` may carry `fleet` (a handle of MitigationFleet); by default the named actor is used.
    """
    key = validate_api_key(config.api_key)
    register_secret(key)
    if config.fleet.asn_api_key:
        register_secret(config.fleet.asn_api_key)
    handle = (state or {}).get("fleet") or rf_state.actor(
        MitigationFleet, config.fleet_actor, config.fleet, config.fleet_actor
    )
    client = FleetClient(handle)
    guard = api_key_guard(
        [key],
        header=API_KEY_HEADER,
        on_failure=lambda request, status, message: ApiError(status, message),
        component="mitigation",
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await client.ensure_started()
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
    install_handlers(app)
    app.add_middleware(BodyLimitMiddleware, limit=MAX_BODY_BYTES, refuse=too_large)
    app.include_router(public_router(client))
    app.include_router(fleet_router(client), dependencies=[Depends(guard)])

    node_app = FastAPI(
        title="Mitigation node management API",
        description=f"One node's management API. Every route except /health needs `{API_KEY_HEADER}`.",
    )
    install_handlers(node_app)
    node_app.include_router(node_router(client, guard))
    use_local_docs_assets(node_app)
    app.router.routes.append(Mount("/nodes/{node_id}", app=node_app))
    use_local_docs_assets(app)
    return app
