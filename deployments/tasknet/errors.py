"""The task network's error shape, built in one place: `{detail: string}` (spec §7)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from actors.tasknet.ledger import Reject
from rayfleet.logs import get_logger

log = get_logger("tasknet")


class TasknetError(StarletteHTTPException):
    """An API error with the spec's status codes (400, 403, 404, 500, 503) and a readable detail."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(status_code=status, detail=detail)


def unwrap(answer: dict[str, Any]) -> Any:
    """The result of an actor call, or the TasknetError it carries."""
    if "error" in answer:
        raise TasknetError(int(answer.get("status", 400)), str(answer["error"]))
    return answer["result"]


def auth_failure(request: Request, status: int, message: str) -> Exception:
    return TasknetError(status, message)


def _validation_detail(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "validation error: " + "; ".join(parts)


def install(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"detail": str(exc.detail)}, status_code=exc.status_code, headers=getattr(exc, "headers", None)
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _validation_detail(exc)}, status_code=400)

    @app.exception_handler(Reject)
    async def rejected(request: Request, exc: Reject) -> JSONResponse:
        return JSONResponse({"detail": exc.message}, status_code=exc.status)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error", extra={"path": request.url.path, "error": type(exc).__name__})
        return JSONResponse({"detail": "internal error"}, status_code=500)
