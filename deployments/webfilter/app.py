"""The web filtering proxy admin API: create_app(config, state) -> FastAPI.

State (`WebfilterState`, shared by every replica through named actors): `auth` (AuthState), `logs`
(LogStore), `proxy` (ProxyOwner). Startup makes sure Squid and dnsmasq run with the effective policy
and the log tailer follows Squid's access log.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from actors.webfilter.logstore import LogStore
from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter import ui
from deployments.webfilter.config import WebfilterConfig
from deployments.webfilter.errors import (
    ApiError,
    ApiVersionMiddleware,
    BodyCaps,
    api_error,
    errors,
    http_error,
    render,
    validation_error,
)
from deployments.webfilter.routes import (
    admin,
    auth_routes,
    dns_logs,
    groups,
    lists,
    logs,
    rule_hits,
    subscriptions,
    waf,
    ws,
)
from deployments.webfilter.state import WebfilterState
from rayfleet.appstate import attach
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers
from rayfleet.http import RequestIdMiddleware
from rayfleet.logs import get_logger
from rayfleet.state import call

log = get_logger("webfilter")


def create_app(config: WebfilterConfig, state: WebfilterState | None = None) -> FastAPI:
    """The app over `state` (default: `WebfilterState.from_ray(config)`, which raises ConfigError without
    WEBFILTER_ADMIN_PASSWORD)."""
    context = state or WebfilterState.from_ray(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        policy = context.store.effective_policy()
        status = await call(context.proxy, ProxyOwner.ensure, policy)
        await call(
            context.logs, LogStore.start, status["access_log"], status["dns_log"], context.proxy, status["dns_sinkhole"]
        )
        log.info("web filter ready", extra={"proxy": status["proxy"]})
        yield

    app = FastAPI(
        title="rayfleet web filtering proxy admin API",
        version=config.version,
        description="Admin API over a real Squid (+ dnsmasq): lists, settings, logs and analytics.",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url="/redoc",
        responses=errors(422, 500),
    )
    attach(app, context)
    install_error_handlers(
        app,
        render,
        component="webfilter",
        handlers={ApiError: api_error},
        validation=validation_error,
        http=http_error,
    )
    for module in (auth_routes, rule_hits, lists, subscriptions, groups, logs, dns_logs, waf, admin, ws):
        app.include_router(module.router)
    app.include_router(ui.router)  # the admin UI at / (static/)
    use_local_docs_assets(app)
    app.add_middleware(BodyCaps, small=config.max_body_bytes, large=2 * config.import_max_bytes + 65536)
    app.add_middleware(ApiVersionMiddleware)
    app.add_middleware(RequestIdMiddleware)
    return app
