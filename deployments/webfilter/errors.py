"""The web filter's response shapes, built in one place (spec §7, §9).

Errors: `{status: "error", detail}` (+ `code: "internal_error"` on 500). Collections:
`{status: "success", data, meta: {total, limit, offset}}` plus the deprecated top-level
`total`, `limit`, `offset`. Every response carries `X-API-Version: 1`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from ray.exceptions import RayTaskError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deployments.webfilter.schemas import ErrorBody
from rayfleet.http import BodyLimitMiddleware
from rayfleet.logs import get_logger

API_VERSION = "1"
MAX_DETAIL = 300
log = get_logger("webfilter")


ERROR_DESCRIPTIONS = {
    400: "invalid entry, setting or request",
    401: "authentication required or failed",
    404: "no such entry, category or address",
    409: "the entry is already on the list, or a stored secret does not open with the current key",
    413: "request body over the cap, or import list too large",
    422: "the request does not match its schema",
    429: "too many failed authentication attempts (Retry-After), or too many scans",
    500: "internal error (code: internal_error)",
    502: "an upstream (import URL, ASN API, notification target) failed",
    503: "Squid's cache manager or dnsmasq is unavailable",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` for these error status codes, each with the error body."""
    return {code: {"model": ErrorBody, "description": ERROR_DESCRIPTIONS[code]} for code in codes}


AUTH_ERRORS = errors(401, 429)


class ApiError(Exception):
    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers


def cause(exc: BaseException) -> BaseException:
    """The exception an actor raised. Ray hands it to the caller wrapped (`RayTaskError(<class>)`, an
    instance of the original class too, so `except DataPlaneError` catches it) and the wrapper's text is
    the remote traceback: `ray::ProxyOwner.sync() (pid=..., ip=...)`, file paths, frames. The original is
    its `cause`."""
    while isinstance(exc, RayTaskError) and isinstance(exc.cause, BaseException):
        exc = exc.cause
    return exc


def public_message(exc: BaseException, what: str) -> str:
    """The text of `exc` fit for a response body: the original exception's first line, bounded. The whole
    text (with a remote traceback, when Ray delivered it) goes to the server log with `what`."""
    log.warning(what, extra={"error": str(exc), "error_type": type(exc).__name__})
    original = cause(exc)
    lines = str(original).strip().splitlines()
    return (lines[0] if lines else type(original).__name__)[:MAX_DETAIL]


def error_response(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"status": "error", "detail": detail}
    if status >= 500:
        body["code"] = "internal_error"
    return JSONResponse(body, status_code=status, headers=headers)


def ok(data: Any = None, **extra: Any) -> dict[str, Any]:
    return {"status": "success", "data": data, **extra}


def page(items: list[Any], total: int, limit: int, offset: int) -> dict[str, Any]:
    return {
        "status": "success",
        "data": items,
        "meta": {"total": total, "limit": limit, "offset": offset},
        "total": total,
        "limit": limit,
        "offset": offset,
    }


class ApiVersionMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*list(message.get("headers", [])), (b"x-api-version", API_VERSION.encode())]
            await send(message)

        await self.app(scope, receive, tagged)


# -- handlers for rayfleet.errors.install_error_handlers (app.py) ----------------------------------
def render(request: Request, status: int, detail: str, headers: Mapping[str, str] | None) -> JSONResponse:
    return error_response(status, detail, dict(headers) if headers else None)


def api_error(request: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.detail, exc.headers)


def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    detail = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"no route for {request.method} {request.url.path}"
    return error_response(exc.status_code, detail, dict(exc.headers or {}))


def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """The first problem only: `invalid request: <where>: <message>`."""
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    return error_response(422, f"invalid request: {where}: {first.get('msg', 'validation failed')}".strip())


def too_large(limit: int) -> ASGIApp:
    """The 413 of a body over the cap, in the component's error shape."""
    return error_response(413, f"the request body is larger than the limit of {limit} bytes")


class BodyCaps:
    """`BodyLimitMiddleware` with two caps: `large` for the routes that take whole lists (imports,
    restore-config), `small` for every other route."""

    def __init__(self, app: ASGIApp, small: int, large: int) -> None:
        self.small = BodyLimitMiddleware(app, small, too_large)
        self.large = BodyLimitMiddleware(app, large, too_large)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        bulk = path.endswith(("/import", "/import-geo", "/restore-config"))
        await (self.large if bulk else self.small)(scope, receive, send)
