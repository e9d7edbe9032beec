"""The HTTP surface: `create_app(config, state) -> FastAPI` (middleware, error handlers, routers)."""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from rayfleet.appstate import attach
from rayfleet.auth import api_key_guard
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers, validation_message
from rayfleet.http import BodyLimitMiddleware, RequestIdMiddleware
from rayfleet.logs import get_logger, register_secret
from rayfleet.staticpage import page_router

from . import validate as v
from .config import LxcConfig
from .errors import (
    INTERNAL_MESSAGE,
    BadRequest,
    CommandFailed,
    HTTPProblem,
    NotFound,
    bad_instance_id,
    bad_request,
    from_command,
    message_error,
    missing,
    not_found,
    problem,
    too_large,
)
from .routes import api_router
from .state import LxcState

log = get_logger("lxc")
PREFIX = "/api/v1"
KEY_REQUIRED = "A valid API key is required in the X-API-Key header."
STATIC_SEGMENTS = {"start", "stop", "terminate", "reboot", "status", "scale", "clone", "app"}
INSTANCE_PATH = re.compile(r"^/api/v1/lxc/instances/([^/]+)(?:/.*)?$", re.DOTALL)
DIGITS = re.compile(r"[0-9]+")


class InstanceIdHook:
    """The spec's hook: a non-numeric `{instance_id}` path segment is 400 {code, name, description} before any handler."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            root = scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root) :] or "/"
            match = INSTANCE_PATH.match(path)
            if match and match.group(1) not in STATIC_SEGMENTS and not DIGITS.fullmatch(match.group(1)):
                await bad_instance_id()(scope, receive, send)
                return
        await self.app(scope, receive, send)


def allowed_methods(app: FastAPI, scope: MutableMapping[str, Any]) -> str:
    """Every method some route serves at this path (Starlette names only the first route that matched)."""
    allowed = []
    for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
        probe = {**scope, "method": method}
        if any(route.matches(probe)[0] == Match.FULL for route in app.router.routes):
            allowed.append(method)
    return ", ".join(allowed)


def _install_error_handlers(app: FastAPI) -> None:
    """Every error answer in the spec's shapes (built in errors.py); 405 names every allowed method."""
    install_error_handlers(
        app,
        lambda request, status, message, headers: message_error(status, message, headers),
        component="lxc",
        handlers={
            BadRequest: lambda request, exc: bad_request(exc.message),
            v.Invalid: lambda request, exc: bad_request(str(exc)),
            CommandFailed: lambda request, exc: from_command(exc),
            NotFound: lambda request, exc: missing(exc.message),
            HTTPProblem: lambda request, exc: problem(exc.status, exc.description),
        },
        validation=lambda request, exc: bad_request(validation_message(exc, "invalid request")),
        http=_http_error,
        internal_message=INTERNAL_MESSAGE,
    )


def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    if exc.status_code == 404:
        return not_found(request.url.path)
    headers = dict(getattr(exc, "headers", None) or {})
    if exc.status_code == 405:
        headers["Allow"] = allowed_methods(request.app, request.scope)
    return problem(exc.status_code, str(exc.detail), headers or None)


def _document_real_errors_only(app: FastAPI) -> None:
    """Drop FastAPI's default 422 from the OpenAPI document: request validation answers 400 here."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        doc = generate()
        for operations in doc.get("paths", {}).values():
            for operation in operations.values():
                operation.get("responses", {}).pop("422", None)
        for name in ("HTTPValidationError", "ValidationError"):
            doc.get("components", {}).get("schemas", {}).pop(name, None)
        return doc

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(config: LxcConfig, state: LxcState | None = None) -> FastAPI:
    """Build the API; without `state`, `LxcState.from_ray(config)` (lock actors through Ray, or stand-ins)."""
    warnings = config.check_startable()
    api_key = config.resolved_api_key()
    register_secret(api_key)
    for region in config.regions.values():
        for zone in region.availability_zones.values():
            register_secret(zone.effective_password())
    for warning in warnings:
        log.warning(warning)

    app = FastAPI(
        title="Container management API",
        version="1.0.0",
        docs_url=f"{PREFIX}/docs",
        openapi_url=f"{PREFIX}/openapi.json",
        redoc_url=None,
        description=(
            "LXC containers on Proxmox VE hosts, driven over SSH. Send the API key in the X-API-Key header. "
            f"Request bodies are capped at api.max_body_bytes ({config.api.max_body_bytes} bytes here)."
        ),
    )
    attach(app, state or LxcState.from_ray(config))

    app.add_middleware(InstanceIdHook)
    if config.api.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.api.allowed_origins),
            allow_credentials=False,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["X-API-Key", "Content-Type"],
        )
    app.add_middleware(BodyLimitMiddleware, limit=config.api.max_body_bytes, refuse=too_large)
    app.add_middleware(RequestIdMiddleware)
    _install_error_handlers(app)

    app.include_router(page_router("deployments.lxc"))  # the web UI at / (rayfleet.staticpage)
    guard = api_key_guard(
        [api_key],
        header="X-API-Key",
        on_failure=lambda request, status, message: HTTPProblem(status, KEY_REQUIRED),
        component="lxc",
        missing_status=401,
        wrong_status=401,
        description="the configured api_key",
    )
    app.include_router(api_router(guard), prefix=PREFIX)
    use_local_docs_assets(app)
    _document_real_errors_only(app)
    return app
