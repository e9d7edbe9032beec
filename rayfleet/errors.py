"""One way to install a component's error handlers.

Each component keeps its own error *shape* in its `errors.py` (the spec gives
each one its own body); what is the same everywhere is which exceptions must
leave in that shape: the component's own errors, Starlette's HTTP errors (404,
405, 413...), FastAPI's request validation, and anything unexpected, which is
logged with the request id and answered 500 without its text.

    install_error_handlers(
        app,
        render=lambda request, status, message, headers: my_body(status, message, headers),
        component="asn",
        handlers={ApiError: lambda request, exc: my_body(exc.status, exc.message, exc.headers)},
    )

The platform's body cap (`install_body_cap`, every app gets one in `rayfleet.serving`)
answers its 413 through the same handlers, so it too leaves in the component's shape.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware import Middleware
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from rayfleet.http import BodyLimitMiddleware, BodyTooLarge, RequestIdMiddleware, request_id
from rayfleet.logs import get_logger

Render = Callable[[Request, int, str, Mapping[str, str] | None], Response]
"""``render(request, status, message, headers)`` → the component's error response."""

Handler = Callable[[Request, Any], Response]
"""``handler(request, exc)`` → a response, for one exception class."""


def validation_message(exc: RequestValidationError, prefix: str = "invalid request", limit: int = 5) -> str:
    """A readable one-line summary of a validation error: ``prefix: field: message; ...``."""
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return f"{prefix}: " + "; ".join(parts)


def install_error_handlers(
    app: FastAPI,
    render: Render,
    *,
    component: str,
    handlers: Mapping[type[Exception], Handler] | None = None,
    validation: Handler | None = None,
    http: Handler | None = None,
    internal_message: str = "internal error",
) -> None:
    """Route every error the app can raise to the component's shape.

    - ``handlers``: the component's own exception classes, each with its renderer;
    - ``http``: Starlette's `HTTPException` (default: its status, detail and headers);
    - ``validation``: request validation (default: 400 with :func:`validation_message`);
    - any other exception: logged with the request id, answered 500 ``internal_message``.
    """
    log = get_logger(component)

    def default_http(request: Request, exc: StarletteHTTPException) -> Response:
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        return render(request, exc.status_code, message, exc.headers)

    def default_validation(request: Request, exc: RequestValidationError) -> Response:
        return render(request, 400, validation_message(exc), None)

    def internal(request: Request, exc: Exception) -> Response:
        log.error(
            "unhandled error",
            exc_info=exc,
            extra={"request_id": request_id(request), "path": request.url.path, "error": type(exc).__name__},
        )
        return render(request, 500, internal_message, None)

    table: dict[type[Exception], Handler] = {
        StarletteHTTPException: http or default_http,
        RequestValidationError: validation or default_validation,
        **(handlers or {}),
        Exception: internal,
    }
    for exc_class, handler in table.items():
        app.add_exception_handler(exc_class, _adapt(handler))


def _adapt(handler: Handler) -> Callable[[Request, Exception], Any]:
    async def handle(request: Request, exc: Exception) -> Response:
        return handler(request, exc)

    return handle


def answer_as(app: FastAPI, exc: StarletteHTTPException) -> ASGIApp:
    """An ASGI app answering `exc` the way `app`'s own exception handlers do (its error shape)."""

    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        handler = _handler_for(app, exc)
        response = handler(request, exc) if handler else None
        if inspect.isawaitable(response):
            response = await response
        if not isinstance(response, Response):
            response = JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
        await response(scope, receive, send)

    return answer


def _handler_for(app: FastAPI, exc: Exception) -> Callable[..., Any] | None:
    handlers = app.exception_handlers
    if isinstance(exc, StarletteHTTPException) and exc.status_code in handlers:
        return handlers[exc.status_code]
    return next((handlers[cls] for cls in type(exc).__mro__ if cls in handlers), None)


def install_body_cap(app: FastAPI, limit: int) -> None:
    """Cap `app`'s request bodies at `limit` bytes (Content-Length or chunked: `BodyLimitMiddleware`),
    refusing with 413 in the app's own error shape. The cap sits just inside the app's
    `RequestIdMiddleware`, so the refusal carries the request id like every other answer."""
    if limit < 1:
        raise ValueError(f"max_body_bytes must be positive, got {limit}")
    cap = Middleware(BodyLimitMiddleware, limit=limit, refuse=lambda n: answer_as(app, BodyTooLarge(n)))
    stack: list[Any] = app.user_middleware  # outermost first
    ids = [i for i, m in enumerate(stack) if m.cls is RequestIdMiddleware]
    stack.insert(ids[0] + 1 if ids else 0, cap)
