"""The web filtering proxy admin API: create_app(config, state) -> FastAPI.

State (shared by every replica): `auth` (AuthState), `logs` (LogStore), `proxy` (ProxyOwner),
named actors unless `state` passes handles (tests). Startup makes sure the admin user exists,
Squid and dnsmasq run with the effective policy, and the log tailer follows Squid's access log.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import FastAPI

from actors.webfilter.authstate import AuthState
from actors.webfilter.dataplane import ProxySettings
from actors.webfilter.logstore import LogStore
from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter import ca
from deployments.webfilter.config import WebfilterConfig
from deployments.webfilter.context import Context
from deployments.webfilter.errors import ApiVersionMiddleware, errors, install_handlers
from deployments.webfilter.routes import admin, auth_routes, lists, logs, waf, ws
from deployments.webfilter.secretbox import SecretBox
from deployments.webfilter.store import Store
from rayfleet import state as rf_state
from rayfleet.config import ConfigError
from rayfleet.docs import use_local_docs_assets
from rayfleet.http import RequestIdMiddleware, parse_networks
from rayfleet.logs import get_logger, register_secret

log = get_logger("webfilter")


def build_context(config: WebfilterConfig, state: Mapping[str, Any] | None) -> Context:
    if config.admin_password is None:
        raise ConfigError("WEBFILTER_ADMIN_PASSWORD is not set: the web filter has no default admin password")
    register_secret(config.admin_password.get_secret_value())
    root = config.root
    root.mkdir(parents=True, exist_ok=True)
    api_key = config.asn_api_key.get_secret_value() if config.asn_api_key else None
    store = Store(root / "config.db", SecretBox.for_data_dir(api_key, root))
    ca_cert, ca_key = ca.ensure_ca(root / "ca")
    store.ensure_admin(config.auth.admin_user, config.admin_password.get_secret_value())
    given = dict(state or {})
    cfg = config.auth
    auth_handle = given.get("auth") or rf_state.actor(
        AuthState, "webfilter_auth", cfg.lockout_attempts, float(cfg.lockout_window_seconds)
    )
    proxy_settings = ProxySettings(**config.proxy.model_dump(), ca_cert=str(ca_cert), ca_key=str(ca_key))
    proxy_handle = given.get("proxy") or rf_state.actor(
        ProxyOwner, "webfilter_proxy", str(root / "proxy"), proxy_settings
    )
    logs_handle = given.get("logs") or rf_state.actor(
        LogStore, "webfilter_logs", str(root / "logs.duckdb"), None, config.tail_interval_seconds
    )
    return Context(
        config=config,
        store=store,
        auth=auth_handle,
        logs=logs_handle,
        proxy=proxy_handle,
        trusted=parse_networks(config.trusted_proxies),
        ca_cert=ca_cert,
        ca_key=ca_key,
        public_check=given.get("public_check"),
    )


def create_app(config: WebfilterConfig, state: Mapping[str, Any] | None = None) -> FastAPI:
    context = build_context(config, state)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        policy = context.store.effective_policy()
        status = await context.proxy.ensure.remote(policy)
        await context.logs.start.remote(status["access_log"])
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
    app.state.ctx = context
    app.state.fanout = ws.Fanout(context)
    install_handlers(app)
    for module in (auth_routes, lists, logs, waf, admin, ws):
        app.include_router(module.router)
    use_local_docs_assets(app)
    app.add_middleware(ApiVersionMiddleware)
    app.add_middleware(RequestIdMiddleware)
    return app
