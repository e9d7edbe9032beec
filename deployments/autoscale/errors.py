"""The autoscale API's envelopes, built in one place.

Success: `{status: "success", message, data}`. Validation failure: 400
`{status: "error", message: "Validation failed", errors: [...]}`. Anything
else: `{status: "error", message}` with the status code (401 missing key,
403 wrong key, 404 unknown container or route, 429 rate limited, 500 a failed
`pct` command, 503 no host reachable).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse


class ErrorBody(BaseModel):
    status: str = "error"
    message: str
    errors: list[str] | None = None


class ApiError(Exception):
    def __init__(
        self, status: int, message: str, errors: list[str] | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = headers or {}


def validation_failed(errors: list[str]) -> ApiError:
    return ApiError(400, "Validation failed", errors)


def success(message: str, data: object) -> dict[str, object]:
    return {"status": "success", "message": message, "data": data}


def error_response(
    status: int, message: str, errors: list[str] | None = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body: dict[str, str | list[str]] = {"status": "error", "message": message}
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, headers=headers)


def describe(err: Mapping[str, Any]) -> str:
    """One validation error as the `errors` list shows it: `field: message` (body/query prefixes dropped)."""
    where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query"))
    return f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid"))


def api_error(request: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.message, exc.errors, exc.headers)


def request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    return error_response(400, "Validation failed", [describe(e) for e in exc.errors()])


def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    message = "Not found" if exc.status_code == 404 else str(exc.detail)
    return error_response(exc.status_code, message)
