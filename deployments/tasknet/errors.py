"""The task network's error shape, built in one place: `{detail: string}` (spec §7)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from actors.tasknet.ledger import Reject
from rayfleet.errors import Handler, validation_message


class TasknetError(StarletteHTTPException):
    """An API error with the spec's status codes (400, 403, 404, 500, 503) and a readable detail."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(status_code=status, detail=detail)


def unwrap(answer: Mapping[str, Any]) -> Any:
    """The result of an actor call, or the TasknetError it carries."""
    if "error" in answer:
        raise TasknetError(int(answer.get("status", 400)), str(answer["error"]))
    return answer["result"]


def auth_failure(request: Request, status: int, message: str) -> Exception:
    return TasknetError(status, message)


def render(request: Request, status: int, message: str, headers: Mapping[str, str] | None) -> Response:
    return JSONResponse({"detail": message}, status_code=status, headers=dict(headers) if headers else None)


def http_error(request: Request, exc: StarletteHTTPException) -> Response:
    return render(request, exc.status_code, str(exc.detail), exc.headers)


def validation_error(request: Request, exc: RequestValidationError) -> Response:
    return render(request, 400, validation_message(exc, "validation error"), None)


def rejected(request: Request, exc: Reject) -> Response:
    """A refusal of the node's state machine that reached the app (its status and message)."""
    return render(request, exc.status, exc.message, None)


HANDLERS: dict[type[Exception], Handler] = {Reject: rejected}
