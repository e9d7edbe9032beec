"""Error shapes of the gateway, built in one place.

Every error, on inference and control-plane routes alike, uses the OpenAI error
envelope so the official SDKs raise their typed exceptions:
``{"error": {"message": str, "type": str, "code": str | null, "param": null}}``.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

from deployments.llm_gateway.jsonlimits import HARD_DEPTH_LIMIT, NonFiniteNumber, loads, nesting_depth_exceeds

# status -> (error type, default code)
_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    402: ("insufficient_quota", "budget_exceeded"),
    403: ("permission_error", "forbidden"),
    404: ("not_found_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    408: ("timeout_error", "upstream_timeout"),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", "payload_too_large"),
    422: ("invalid_request_error", "validation_error"),
    429: ("rate_limit_error", "rate_limited"),
    500: ("api_error", "internal_error"),
    502: ("api_error", "upstream_error"),
    503: ("service_unavailable", "unavailable"),
    504: ("timeout_error", "upstream_timeout"),
}


class GatewayError(Exception):
    """Raised anywhere in the request path; rendered by :func:`error_response`."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        error_class: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or _TYPES.get(status, ("api_error", "error"))[1]
        self.headers = headers or {}
        self.error_class = error_class or self.code


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    etype, default_code = _TYPES.get(status, ("api_error", "error"))
    return {"error": {"message": message, "type": etype, "code": code or default_code, "param": None}}


def error_response(exc: GatewayError, extra_headers: dict[str, str] | None = None) -> JSONResponse:
    headers = dict(exc.headers)
    if extra_headers:
        headers.update(extra_headers)
    return JSONResponse(error_body(exc.status, exc.message, exc.code), status_code=exc.status, headers=headers)


def sse_error_event(message: str, code: str = "upstream_error") -> bytes:
    """The event that ends a stream whose upstream failed after the first byte."""

    payload = {"error": {"message": message, "type": "api_error", "code": code, "param": None}}
    return b"data: " + json.dumps(payload).encode() + b"\n\ndata: [DONE]\n\n"


def json_object(raw: bytes, max_depth: int = HARD_DEPTH_LIMIT) -> dict[str, Any]:
    """A request body that must be one JSON object, else 400 (`nesting_too_deep`, `invalid_number`, `invalid_json`).

    The nesting depth is checked on the raw bytes first, so a deep body never reaches the parser.
    """
    depth = min(max_depth, HARD_DEPTH_LIMIT) if max_depth > 0 else HARD_DEPTH_LIMIT
    if nesting_depth_exceeds(raw, depth):
        raise GatewayError(
            400,
            f"Request body is nested deeper than {depth} levels",
            code="nesting_too_deep",
            error_class="nesting_depth",
        )
    try:
        data = loads(raw) if raw else None
    except NonFiniteNumber as exc:
        raise GatewayError(400, f"Request body has an invalid number: {exc}", code="invalid_number") from None
    except ValueError:
        raise GatewayError(400, "Request body is not valid JSON", code="invalid_json") from None
    if not isinstance(data, dict):
        raise GatewayError(400, "Request body must be a JSON object", code="invalid_json")
    return data
