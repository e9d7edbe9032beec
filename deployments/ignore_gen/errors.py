"""Error responses of the generator (spec §7): every error body is `{detail: string}`.

400 both `tree` and `features` missing; 404 unknown feature with no template;
413 a configured limit exceeded (the spec sets no limits; this is ours);
422 framework validation (malformed feature names, multi-line extras, bad
JSON); 500 an unexpected internal error, always logged (`rayfleet.errors`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    """An error with its status; raised by handlers, rendered as `{detail}`."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def error_response(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _location(loc: Sequence[Any]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "request"


def validation_detail(errors: Sequence[dict[str, Any]]) -> str:
    """One readable sentence per problem, joined: `body.features[0]: must match ...`."""
    messages = []
    for err in errors:
        msg = str(err.get("msg", "invalid value"))
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        messages.append(f"{_location(err.get('loc', ()))}: {msg}")
    return "; ".join(messages) or "invalid request"


# the renderers `rayfleet.errors.install_error_handlers` gets (app.py)

INTERNAL_MESSAGE = "internal error: the generator failed; the cause is logged"


def render(_: Request, status: int, detail: str, headers: Mapping[str, str] | None) -> Response:
    return error_response(status, detail, dict(headers) if headers else None)


def api_error(_: Request, exc: ApiError) -> Response:
    return error_response(exc.status, exc.detail)


def validation_error(_: Request, exc: RequestValidationError) -> Response:
    return error_response(422, validation_detail(exc.errors()))


def http_error(_: Request, exc: StarletteHTTPException) -> Response:
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return error_response(exc.status_code, detail, getattr(exc, "headers", None))
