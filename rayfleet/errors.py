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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from rayfleet.http import request_id
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
