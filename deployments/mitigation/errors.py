"""The mitigation API's error shape, built in one place: `{error: {code, message}}`.

Spec 002 §7 leaves D's error bodies open; every error of this component, including
validation and routing errors, leaves as `{"error": {"code": "<code>", "message": "..."}}`
with `code` one of the names in CODES. `rayfleet.errors.install_error_handlers` routes
every exception here (see `app.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

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


def unwrap(envelope: Mapping[str, Any]) -> Any:
    """The value of the fleet actor's envelope `{ok, value}`; `{ok: False, status, message}` → ApiError."""
    if not envelope["ok"]:
        raise ApiError(envelope["status"], envelope["message"])
    return envelope["value"]


# -- handlers for rayfleet.errors.install_error_handlers ------------------------------------------
def render(request: Request, status: int, message: str, headers: Mapping[str, str] | None) -> JSONResponse:
    """Every error in the component's shape (headers such as 405's Allow are not passed on)."""
    return error_response(status, message)


def api_error(request: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.message)


def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route for {request.method} {request.url.path}"
    return error_response(exc.status_code, message)


def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    details = [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))} for e in exc.errors()]
    return error_response(422, "request validation failed", details=details)
