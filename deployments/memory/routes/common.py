"""What the REST routers share: the state dependency, the JSON body, the requested scope."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import Depends, Request

from deployments.memory.errors import UsageError
from deployments.memory.rest_state import RestState
from rayfleet.appstate import state_of

Ctx = Annotated[RestState, Depends(state_of(RestState))]


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw or b"null")
    except ValueError:
        raise UsageError("body is not valid JSON") from None
    if not isinstance(body, dict):
        raise UsageError("body must be a JSON object")
    return body


def scope_of(request: Request, body: dict[str, Any] | None = None) -> str | None:
    """The body's `scope`, else the `scope` query parameter, else the `X-MEM-Scope` header."""
    if body and body.get("scope") is not None:
        scope: str | None = body["scope"]  # checked by Memory.scope
        return scope
    return request.query_params.get("scope") or request.headers.get("x-mem-scope") or None
