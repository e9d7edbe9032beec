"""Memories: list or search, read, create or update, delete (keys may contain '/')."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from deployments.memory.errors import UsageError
from deployments.memory.rest_state import RestState
from deployments.memory.routes.common import Ctx, json_body, scope_of
from deployments.memory.store import check_limit

router = APIRouter()
Body = Annotated[dict[str, Any], Depends(json_body)]
T = TypeVar("T")


@router.get("/memories")
def list_or_search(
    request: Request, state: Ctx, q: str | None = None, limit: str | None = None, pinned: str | None = None
) -> dict[str, Any]:
    mem = state.memory()
    scope = mem.scope(scope_of(request), allow_all=True)
    if q is not None and q.strip():
        return dict(mem.search(q, check_limit(limit or 50), scope=scope), scope=scope)
    only_pinned = (pinned or "").lower() in ("1", "true", "yes")
    items = mem.store.list(scope, check_limit(limit or 200), pinned_only=only_pinned)
    return {"scope": scope, "count": len(items), "memories": items}


@router.get("/memories/{key:path}")
def get_memory(request: Request, state: Ctx, key: str) -> dict[str, Any]:
    mem = state.memory()
    return mem.store.get(mem.scope(scope_of(request)), key)


def save(state: RestState, request: Request, body: dict[str, Any], key: Any) -> JSONResponse:
    if key is None:
        raise UsageError("field 'key' is required")
    if body.get("value") is None:
        raise UsageError("field 'value' is required")
    origin = body.get("origin") or body.get("origin_agent") or ""
    mem = state.memory()
    result = mem.save(key, body["value"], body.get("tags"), origin=origin, scope=mem.scope(scope_of(request, body)))
    result["memory"] = mem.store.get(result["scope"], result["key"], with_links=False)
    return JSONResponse(result, status_code=201 if result["created"] else 200)


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    return await run_in_threadpool(fn, *args)


@router.post("/memories")
async def create(request: Request, state: Ctx, body: Body) -> JSONResponse:
    return await _in_thread(save, state, request, body, body.get("key"))


@router.put("/memories/{key:path}")
async def put(request: Request, state: Ctx, key: str, body: Body) -> JSONResponse:
    if body.get("key") not in (None, key):
        raise UsageError("the body's key differs from the key in the path")
    return await _in_thread(save, state, request, body, key)


@router.delete("/memories/{key:path}")
def delete(request: Request, state: Ctx, key: str) -> dict[str, Any]:
    mem = state.memory()
    return mem.store.delete(mem.scope(scope_of(request)), key)
