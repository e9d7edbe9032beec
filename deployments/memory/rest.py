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
import threading
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from deployments.memory.config import Settings
from deployments.memory.errors import MemError, UsageError
from deployments.memory.service import Memory
from deployments.memory.store import Store, check_limit
from rayfleet.auth import presented_key
from rayfleet.http import BodyLimitMiddleware
from rayfleet.security import constant_time_equals

MAX_BODY_BYTES = 2 * 1024 * 1024
EXTENSION_SCHEMES = ("chrome-extension://", "moz-extension://")
ALLOWED_HEADERS = "Content-Type, Authorization, X-MEM-Token, X-MEM-Scope"
ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS"
STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    421: "misdirected_request",
    500: "internal",
}


def error(status: int, message: str, code: str | None = None, headers: dict | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": message, "code": code or STATUS_CODES.get(status, "error")}, status_code=status, headers=headers
    )


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


def create_app(settings: Settings, token: str, version: str = "") -> FastAPI:
    """The REST app. Each worker thread gets its own SQLite connection."""
    app = FastAPI(title="mem REST server", version=version or "0", docs_url=None, redoc_url=None, openapi_url=None)
    local = threading.local()
    allowed_hosts: set[str] = set()

    def memory() -> Memory:
        if getattr(local, "memory", None) is None:
            local.memory = Memory(settings, Store(settings.db_path))
        return local.memory

    def scope_of(request: Request, body: dict | None = None) -> str | None:
        if body and body.get("scope") is not None:
            return body["scope"]
        return request.query_params.get("scope") or request.headers.get("x-mem-scope") or None

    # inside the guard below (added first, so it runs after it): a 413 keeps the CORS headers
    app.add_middleware(
        BodyLimitMiddleware,
        limit=MAX_BODY_BYTES,
        refuse=lambda limit: error(413, f"body larger than {limit} bytes"),
    )

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        origin = request.headers.get("origin") or ""
        extension = is_extension_origin(origin)
        host = request.headers.get("host", "").lower()
        if allowed_hosts and host not in allowed_hosts:
            return error(421, "this server answers only on 127.0.0.1 and localhost")
        if request.method == "OPTIONS" and request.headers.get("access-control-request-method"):
            if extension:
                return Response(status_code=204, headers=_cors_headers(origin))
            return error(403, "CORS is allowed only for browser-extension origins", headers={"Vary": "Origin"})
        if request.url.path != "/health":
            # In the middleware rather than rayfleet.auth's route dependency: unknown paths and
            # extension preflights are decided here too, and a 401 carries the CORS headers.
            if not constant_time_equals(presented_key(request, "X-MEM-Token", bearer=True), token):
                response: Response = error(
                    401,
                    "missing or invalid token (X-MEM-Token or Authorization: Bearer)",
                    headers={"WWW-Authenticate": "Bearer"},
                )
                if extension:
                    response.headers.update(_cors_headers(origin))
                return response
        response = await call_next(request)
        if extension:
            response.headers.update(_cors_headers(origin))
        else:
            response.headers["Vary"] = "Origin"
        return response

    @app.exception_handler(MemError)
    async def mem_error(_: Request, exc: MemError) -> JSONResponse:
        return error(exc.http_status, exc.message, exc.code)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        return error(exc.status_code, message)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error(400, "invalid request: " + "; ".join(str(e.get("msg")) for e in exc.errors()))

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        return error(500, f"internal error ({type(exc).__name__})")

    async def json_body(request: Request) -> dict:
        raw = await request.body()
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            raise UsageError("body is not valid JSON") from None
        if not isinstance(body, dict):
            raise UsageError("body must be a JSON object")
        return body

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok", "version": version}

    @app.get("/memories")
    def list_or_search(
        request: Request, q: str | None = None, limit: str | None = None, pinned: str | None = None
    ) -> dict:
        mem = memory()
        scope = mem.scope(scope_of(request), allow_all=True)
        if q is not None and q.strip():
            return dict(mem.search(q, check_limit(limit or 50), scope=scope), scope=scope)
        only_pinned = (pinned or "").lower() in ("1", "true", "yes")
        items = mem.store.list(scope, check_limit(limit or 200), pinned_only=only_pinned)
        return {"scope": scope, "count": len(items), "memories": items}

    @app.get("/memories/{key:path}")
    def get_memory(request: Request, key: str) -> dict:
        mem = memory()
        return mem.store.get(mem.scope(scope_of(request)), key)

    def save(request: Request, body: dict, key: Any) -> JSONResponse:
        if key is None:
            raise UsageError("field 'key' is required")
        if body.get("value") is None:
            raise UsageError("field 'value' is required")
        origin = body.get("origin") or body.get("origin_agent") or ""
        mem = memory()
        result = mem.save(key, body["value"], body.get("tags"), origin=origin, scope=mem.scope(scope_of(request, body)))
        result["memory"] = mem.store.get(result["scope"], result["key"], with_links=False)
        return JSONResponse(result, status_code=201 if result["created"] else 200)

    @app.post("/memories")
    async def create(request: Request) -> JSONResponse:
        body = await json_body(request)
        return await _in_thread(save, request, body, body.get("key"))

    @app.put("/memories/{key:path}")
    async def put(request: Request, key: str) -> JSONResponse:
        body = await json_body(request)
        if body.get("key") not in (None, key):
            raise UsageError("the body's key differs from the key in the path")
        return await _in_thread(save, request, body, key)

    @app.delete("/memories/{key:path}")
    def delete(request: Request, key: str) -> dict:
        mem = memory()
        return mem.store.delete(mem.scope(scope_of(request)), key)

    def restrict_hosts(port: int) -> None:
        allowed_hosts.update({f"127.0.0.1:{port}", f"localhost:{port}"})
        if port == 80:
            allowed_hosts.update({"127.0.0.1", "localhost"})

    app.state.restrict_hosts = restrict_hosts
    return app


async def _in_thread(fn: Any, *args: Any) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


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
    app = create_app(settings, token, version())
    app.state.restrict_hosts(actual)
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
