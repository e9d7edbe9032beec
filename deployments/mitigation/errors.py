"""The mitigation API's error shape, built in one place: `{error: {code, message}}`.

Spec 002 §7 leaves D's error bodies open; every error of this component, including
validation and routing errors, leaves as `{"error": {"code": "<code>", "message": "..."}}`
with `code` one of the names in CODES.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from rayfleet.logs import get_logger

log = get_logger("mitigation")

CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "validation_error",
    500: "internal_error",
    503: "unavailable",
}


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_body(status: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": CODES.get(status, f"http_{status}"), "message": message, **extra}}


def error_response(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(error_body(status, message, **extra), status_code=status)


def too_large(limit: int) -> JSONResponse:
    return error_response(413, f"request body above {limit} bytes")


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404 and message == "Not Found":
            message = f"no route for {request.method} {request.url.path}"
        return error_response(exc.status_code, message)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error", extra={"path": request.url.path, "error": type(exc).__name__})
        return error_response(500, "internal error")

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        details = [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))} for e in exc.errors()]
        return error_response(422, "request validation failed", details=details)
