"""The ASN API's error shape, built in one place: `{error, code, request_id}`.

`code` is `HTTP_<status>` except 429 (`RATE_LIMITED`) and 500 (`INTERNAL_ERROR`).
The request id is always generated server-side: `<unix seconds>-<8 hex>`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from rayfleet.http import request_id

SPECIAL_CODES = {429: "RATE_LIMITED", 500: "INTERNAL_ERROR"}


def new_request_id() -> str:
    """A timestamp joined to a short id, e.g. `1732280000-9f86d081`."""
    return f"{int(time.time())}-{secrets.token_hex(4)}"


def error_code(status: int) -> str:
    return SPECIAL_CODES.get(status, f"HTTP_{status}")


def error_body(status: int, message: str, rid: str, **extra: Any) -> dict[str, Any]:
    return {"error": message, "code": error_code(status), "request_id": rid, **extra}


def error_response(
    status: int, message: str, rid: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(error_body(status, message, rid, **extra), status_code=status, headers=headers)


class ApiError(Exception):
    """Raised by handlers; rendered in the error shape."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


# the renderers `rayfleet.errors.install_error_handlers` gets (app.py)


def render(request: Request, status: int, message: str, headers: Mapping[str, str] | None) -> Response:
    return error_response(status, message, request_id(request), dict(headers) if headers else None)


def api_error(request: Request, exc: ApiError) -> Response:
    return error_response(exc.status, exc.message, request_id(request), exc.headers)


def http_error(request: Request, exc: StarletteHTTPException) -> Response:
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route for {request.method} {request.url.path}"
    return error_response(exc.status_code, message, request_id(request), dict(exc.headers or {}))


def validation_error(request: Request, exc: RequestValidationError) -> Response:
    details = [{"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", ""))} for err in exc.errors()]
    return error_response(422, "request validation failed", request_id(request), details=details)
