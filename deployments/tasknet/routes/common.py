"""What every router shares: the node a request acts on (a public reader or the token-holding
writer), the typed actor calls, the common models and the error table."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel, ConfigDict

from actors.tasknet.node_actor import TaskNode
from deployments.tasknet.errors import TasknetError, unwrap
from deployments.tasknet.state import TasknetState
from rayfleet.appstate import state_of
from rayfleet.state import ActorHandle, call

Node = ActorHandle[TaskNode]
Ctx = Annotated[TasknetState, Depends(state_of(TasknetState))]


async def writer(request: Request, ctx: Ctx) -> Node:
    """The node handle, for a request that acts as the node: its token is required."""
    await ctx.guard(request)
    return await ctx.handle()


async def reader(request: Request, ctx: Ctx) -> Node:
    """The node handle for a read: public unless `public_reads` is off."""
    if not ctx.config.public_reads:
        await ctx.guard(request)
    return await ctx.handle()


Writer = Annotated[Node, Depends(writer)]
Reader = Annotated[Node, Depends(reader)]


async def view(node: Node, name: str, **kwargs: Any) -> Any:
    return unwrap(await call(node, TaskNode.view, name, **kwargs))


async def submit(node: Node, type_: str, payload: dict[str, Any], channel: str) -> Any:
    return unwrap(await call(node, TaskNode.submit, type_, payload, channel))


async def service(node: Node, name: str, **kwargs: Any) -> Any:
    return unwrap(await call(node, TaskNode.call, name, **kwargs))


class Open(BaseModel):
    """A response whose documented fields may be followed by more."""

    model_config = ConfigDict(extra="allow")


class Message(Open):
    message: str


class ErrorOut(BaseModel):
    detail: str


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text}
    for code, text in (
        (400, "validation error"),
        (401, "missing node token"),
        (403, "not authorized for the action"),
        (404, "resource not found"),
        (409, "conflicts with a change in progress (one validator change at a time)"),
        (413, "body or batch too large"),
        (429, "peer rate limit exceeded"),
        (500, "internal error"),
        (503, "service temporarily unavailable"),
    )
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def channel_name(value: str) -> str:
    if not 0 < len(value) <= 64 or not all(c.isalnum() or c in "-_." for c in value):
        raise TasknetError(400, "channel must be 1..64 letters, digits, '-', '_' or '.'")
    return value
