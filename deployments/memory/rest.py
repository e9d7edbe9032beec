"""`mem serve`: the local REST server for a web clipper (FastAPI on uvicorn, 127.0.0.1 only).

Routes (all JSON; errors are `{"error": message, "code": code}`):
  GET    /health                 open: {"status": "ok", "version"}
  GET    /memories?q=&scope=&limit=&pinned=   list (no q) or search (q)
  GET    /memories/{key}         one record (keys may contain '/')
  POST   /memories               {key, value, tags?, scope?, origin?} -> 201 created / 200 updated
  PUT    /memories/{key}         {value, tags?, scope?, origin?}      -> 201 created / 200 updated
  DELETE /memories/{key}         {"deleted": true} or 404
Every route but /health and CORS preflights needs the token (`X-MEM-Token` or
`Authorization: Bearer`), compared in constant time. The scope is the `scope`
query parameter, else the `X-MEM-Scope` header, else MEM_SCOPE (default `user`);
`*` lists or searches every scope. CORS headers are sent only to
`chrome-extension://` and `moz-extension://` origins.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.responses import Response

from deployments.memory.config import Settings
from deployments.memory.errors import (
    MemError,
    UsageError,
    error,
    http_error,
    mem_error,
    render,
    unexpected,
    validation_error,
)
from deployments.memory.rest_state import RestState
from deployments.memory.routes import health, memories
from deployments.memory.store import Store
from rayfleet.appstate import attach, state_of
from rayfleet.auth import presented_key
from rayfleet.errors import install_error_handlers
from rayfleet.http import BodyLimitMiddleware
from rayfleet.security import constant_time_equals

MAX_BODY_BYTES = 2 * 1024 * 1024
EXTENSION_SCHEMES = ("chrome-extension://", "moz-extension://")
ALLOWED_HEADERS = "Content-Type, Authorization, X-MEM-Token, X-MEM-Scope"
ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS"
TOKEN_MESSAGE = "missing or invalid token (X-MEM-Token or Authorization: Bearer)"


def is_extension_origin(origin: str | None) -> bool:
    return origin is not None and origin.startswith(EXTENSION_SCHEMES) and len(origin) > len("moz-extension://")


def _cors_headers(origin: str) -> dict[str, str]:
    return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": ALLOWED_METHODS,
        "Access-Control-Allow-Headers": ALLOWED_HEADERS,
        "Access-Control-Max-Age": "600",
        "Vary": "Origin",
    }


def create_app(settings: Settings, token: str, version: str = "", state: RestState | None = None) -> FastAPI:
    """The REST app (`RestState.per_thread` by default: each worker thread gets its own SQLite connection)."""
    state = state or RestState.per_thread(settings, token, version)
    app = FastAPI(
        title="mem REST server", version=state.version or "0", docs_url=None, redoc_url=None, openapi_url=None
    )
    attach(app, state)
    # inside the guard below (added first, so it runs after it): a 413 keeps the CORS headers
    app.add_middleware(
        BodyLimitMiddleware,
        limit=MAX_BODY_BYTES,
        refuse=lambda limit: error(413, f"body larger than {limit} bytes"),
    )
    app.middleware("http")(guard)
    install_error_handlers(
        app,
        render,
        component="memory",
        handlers={MemError: mem_error},
        http=http_error,
        validation=validation_error,
    )
    app.include_router(health.router)
    app.include_router(memories.router)
    return app


_state = state_of(RestState)


async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """Host check, CORS (browser extensions only), the token (all but /health), and
    unexpected errors answered 500 naming their class."""
    state = await _state(request)
    origin = request.headers.get("origin") or ""
    extension = is_extension_origin(origin)
    host = request.headers.get("host", "").lower()
    if state.allowed_hosts and host not in state.allowed_hosts:
        return error(421, "this server answers only on 127.0.0.1 and localhost")
    if request.method == "OPTIONS" and request.headers.get("access-control-request-method"):
        if extension:
            return Response(status_code=204, headers=_cors_headers(origin))
        return error(403, "CORS is allowed only for browser-extension origins", headers={"Vary": "Origin"})
    # In the middleware rather than rayfleet.auth's route dependency: unknown paths and
    # extension preflights are decided here too, and a 401 carries the CORS headers.
    if request.url.path != "/health" and not constant_time_equals(
        presented_key(request, "X-MEM-Token", bearer=True), state.token
    ):
        refused = error(401, TOKEN_MESSAGE, headers={"WWW-Authenticate": "Bearer"})
        if extension:
            refused.headers.update(_cors_headers(origin))
        return refused
    try:
        response = await call_next(request)
    except Exception as exc:  # answered as it is, without CORS headers
        return unexpected(exc)
    if extension:
        response.headers.update(_cors_headers(origin))
    else:
        response.headers["Vary"] = "Origin"
    return response


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    sock.listen(128)
    return sock


def serve(settings: Settings, port: int | None, fmt: str) -> int:
    import uvicorn

    from deployments.memory.token import resolve_token, token_path
    from deployments.memory.version import version

    port = settings.serve_port if port is None else port
    if not 0 <= port <= 65535:
        raise UsageError(f"port out of range: {port}")
    Store(settings.db_path).close()
    token, source = resolve_token(settings.serve_token, settings.db_dir)
    sock = bind(port)
    actual = sock.getsockname()[1]
    state = RestState.per_thread(settings, token, version())
    state.restrict_hosts(actual)
    app = create_app(settings, token, state.version, state)
    shown = token if source != "env" else "(from MEM_SERVE_TOKEN)"
    info = {
        "url": f"http://127.0.0.1:{actual}",
        "port": actual,
        "token": shown,
        "token_source": source,
        "token_file": None if source == "env" else token_path(settings.db_dir),
        "db": settings.db_path,
    }
    if fmt == "text":
        sys.stdout.write(f"mem serve: listening on {info['url']}\ntoken: {shown}\n")
    else:
        sys.stdout.write(json.dumps(info) + "\n")
    sys.stdout.flush()
    import copy

    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for handler in log_config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"  # stdout carries only the start-up line
    config = uvicorn.Config(
        app,
        log_level="debug" if settings.debug else "warning",
        access_log=settings.debug,
        lifespan="off",
        log_config=log_config,
    )
    uvicorn.Server(config).run(sockets=[sock])
    return 0
