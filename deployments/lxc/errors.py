"""The API's error shapes (spec §7), built in one place.

| situation                                   | status | body                                          |
|---------------------------------------------|--------|-----------------------------------------------|
| host command exited non-zero (or timed out) | 500    | {error, details (stderr), output, return_code} |
| handler validation (body, query, ids list)  | 400    | {error}                                        |
| missing/invalid API key                     | 401    | {code, name, description}                      |
| non-numeric {instance_id} in the path       | 400    | {code, name, description}                      |
| unknown route / unhandled exception         | 404/500| {error, message}                               |
| any other framework HTTP exception          | status | {code, name, description}                      |
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from fastapi.responses import JSONResponse


class BadRequest(Exception):
    """Handler validation failed: 400 {"error": message}."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class HTTPProblem(Exception):
    """A framework-style HTTP exception: {code, name, description}."""

    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.description = description


class CommandFailed(Exception):
    """A host command exited non-zero; carries what the 500 body needs."""

    def __init__(self, details: str, output: str, return_code: int) -> None:
        super().__init__(details)
        self.details = details
        self.output = output
        self.return_code = return_code


def bad_request(message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=400)


def problem(status: int, description: str, headers: dict[str, str] | None = None) -> JSONResponse:
    name = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    return JSONResponse({"code": status, "name": name, "description": description}, status_code=status, headers=headers)


def unauthorized() -> JSONResponse:
    return problem(401, "A valid API key is required in the X-API-Key header.")


def bad_instance_id() -> JSONResponse:
    return problem(400, "instance_id must consist of digits only.")


def not_found(path: str) -> JSONResponse:
    return JSONResponse(
        {"error": "Not Found", "message": f"The requested URL {path[:200]} was not found on the server."},
        status_code=404,
    )


def internal_error() -> JSONResponse:
    return JSONResponse(
        {
            "error": "Internal Server Error",
            "message": "The server encountered an unexpected condition; see the server log.",
        },
        status_code=500,
    )


def command_failed(details: str, output: str, return_code: int) -> JSONResponse:
    body: dict[str, Any] = {
        "error": "Command execution failed",
        "details": details,
        "output": output,
        "return_code": return_code,
    }
    return JSONResponse(body, status_code=500)
