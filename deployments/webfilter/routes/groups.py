"""Client groups (`/api/groups`): source networks with their own domain lists and time windows, enforced by
Squid before the global lists (see actors/webfilter/grouprules.py). Every change is rendered, parsed by
Squid (`squid -k parse`) and enforced before the call returns; a candidate Squid refuses is put back."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path

from actors.webfilter.dataplane import DataPlaneError
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, errors, ok, public_message
from deployments.webfilter.groups import GroupBody
from deployments.webfilter.routes.common import SIGNED_IN, Ctx, Peer
from deployments.webfilter.schemas import SQLITE_MAX_INT, Envelope
from deployments.webfilter.state import WebfilterState
from deployments.webfilter.store import GroupConflict

router = APIRouter(tags=["client groups"], dependencies=[SIGNED_IN], responses=AUTH_ERRORS)
GroupId = Path(..., ge=1, le=SQLITE_MAX_INT)


async def _store(context: WebfilterState, key: int | None, body: GroupBody) -> dict[str, Any]:
    try:
        return await context.db(context.store.save_group, key, body.policy(), body.description)
    except GroupConflict as exc:
        raise ApiError(exc.status, str(exc)) from None


async def _enforce(context: WebfilterState, ip: Peer, action: str, name: str, undo: Any) -> dict[str, Any]:
    """Apply the stored change; when Squid refuses it, `undo()` puts the store back and the call fails (400)."""
    await context.db(context.store.audit, None, ip, action, name)
    try:
        return await context.sync_proxy()
    except DataPlaneError as exc:
        await undo()
        reason = public_message(exc, "client group refused by the proxy")
        raise ApiError(400, f"client group {name} not applied: {reason}") from None


@router.get("/api/groups", response_model=Envelope, summary="Client groups, in the order their rules apply")
async def list_groups(context: Ctx) -> dict[str, Any]:
    return ok(await context.db(context.store.groups))


@router.get("/api/groups/{id}", response_model=Envelope, summary="One client group", responses=errors(404))
async def get_group(context: Ctx, id: int = GroupId) -> dict[str, Any]:
    found = next((g for g in await context.db(context.store.groups) if g["id"] == id), None)
    if found is None:
        raise ApiError(404, f"no client group with id {id}")
    return ok(found)


@router.post("/api/groups", response_model=Envelope, summary="Create a client group", responses=errors(400, 409, 422))
async def create_group(context: Ctx, ip: Peer, body: GroupBody) -> dict[str, Any]:
    row = await _store(context, None, body)

    async def undo() -> None:
        await context.db(context.store.delete_group, int(row["id"]))

    proxy = await _enforce(context, ip, "groups.add", body.name, undo)
    return ok(row, proxy=proxy)


@router.put(
    "/api/groups/{id}",
    response_model=Envelope,
    summary="Replace a client group",
    responses=errors(400, 404, 409, 422),
)
async def replace_group(context: Ctx, ip: Peer, body: GroupBody, id: int = GroupId) -> dict[str, Any]:
    before = next((g for g in await context.db(context.store.groups) if g["id"] == id), None)
    row = await _store(context, id, body)

    async def undo() -> None:
        if before is not None:
            await _store(context, id, GroupBody.model_validate({k: before[k] for k in GroupBody.model_fields}))

    proxy = await _enforce(context, ip, "groups.update", body.name, undo)
    return ok(row, proxy=proxy)


@router.delete("/api/groups/{id}", response_model=Envelope, summary="Delete a client group", responses=errors(404))
async def delete_group(context: Ctx, ip: Peer, id: int = GroupId) -> dict[str, Any]:
    gone = await context.db(context.store.delete_group, id)
    if gone is None:
        raise ApiError(404, f"no client group with id {id}")

    async def undo() -> None:
        await _store(context, None, GroupBody.model_validate({k: gone[k] for k in GroupBody.model_fields}))

    proxy = await _enforce(context, ip, "groups.delete", gone["name"], undo)
    return ok({"deleted": 1}, proxy=proxy)
