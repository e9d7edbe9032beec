"""Errors of the memory tool, each with its CLI exit code and REST status.

Exit codes (documented in README.md):
  0 success, 1 unexpected failure or a failed `doctor` check, 2 bad usage,
  3 not found, 4 conflict (the target key already exists), 5 storage error,
  6 embedding endpoint missing or failing (only where an endpoint is required).

The REST server's error shape is `{"error": message, "code": code}` (`error`, and the
renderers `rayfleet.errors.install_error_handlers` gets in rest.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports this module: no web framework at its start-up
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException
    from starlette.responses import Response

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CONFLICT = 4
EXIT_STORAGE = 5
EXIT_EMBEDDING = 6


class MemError(Exception):
    """Base class: a message for people plus machine-readable code and statuses."""

    exit_code = EXIT_FAILURE
    http_status = 500
    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"error": self.message, "code": self.code}


class UsageError(MemError):
    exit_code = EXIT_USAGE
    http_status = 400
    code = "bad_request"


class NotFoundError(MemError):
    exit_code = EXIT_NOT_FOUND
    http_status = 404
    code = "not_found"


class ConflictError(MemError):
    exit_code = EXIT_CONFLICT
    http_status = 409
    code = "conflict"


class StorageError(MemError):
    exit_code = EXIT_STORAGE
    http_status = 500
    code = "storage_error"


class EmbeddingError(MemError):
    exit_code = EXIT_EMBEDDING
    http_status = 502
    code = "embedding_error"


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


def error(status: int, message: str, code: str | None = None, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """A REST error answer: `{"error": message, "code": code}` (the code follows the status by default)."""
    from fastapi.responses import JSONResponse

    return JSONResponse(
        {"error": message, "code": code or STATUS_CODES.get(status, "error")}, status_code=status, headers=headers
    )


def render(_: Request, status: int, message: str, headers: Mapping[str, str] | None) -> Response:
    return error(status, message, headers=headers)


def mem_error(_: Request, exc: MemError) -> Response:
    return error(exc.http_status, exc.message, exc.code)


def http_error(_: Request, exc: StarletteHTTPException) -> Response:
    return error(exc.status_code, exc.detail if isinstance(exc.detail, str) else "request failed")


def validation_error(_: Request, exc: RequestValidationError) -> Response:
    return error(400, "invalid request: " + "; ".join(str(e.get("msg")) for e in exc.errors()))


def unexpected(exc: Exception) -> Response:
    """An unexpected exception: 500 naming its class, never its text."""
    return error(500, f"internal error ({type(exc).__name__})")
