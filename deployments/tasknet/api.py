"""What every router shares: the node a request acts on, the token guard, the common models."""

from __future__ import annotations

import os
from typing import Any

from fastapi import Request
from pydantic import BaseModel, ConfigDict

from deployments.tasknet.errors import TasknetError, auth_failure, unwrap
from rayfleet.auth import api_key_guard

TOKEN_HEADER = "X-Node-Token"


def node_tokens(env_name: str) -> dict[str, str]:
    """`n1:<token>,n2:<token>` from the environment; a node without a token accepts no writes."""
    out: dict[str, str] = {}
    for item in os.environ.get(env_name, "").split(","):
        name, _, token = item.strip().partition(":")
        if name and len(token) >= 16:
            out[name] = token
    return out


def make_guard(node: str, env_name: str) -> Any:
    return api_key_guard(
        lambda: [t for t in (node_tokens(env_name).get(node),) if t],
        on_failure=auth_failure,
        component="tasknet",
        header=TOKEN_HEADER,
        bearer=True,
        missing_message="missing node token (X-Node-Token or Authorization: Bearer)",
        wrong_message="invalid node token",
    )


async def writer(request: Request) -> Any:
    """The node handle, for a request that acts as the node: its token is required."""
    await request.app.state.guard(request)
    return await request.app.state.network.node(request.app.state.node_name)


async def reader(request: Request) -> Any:
    """The node handle for a read: public unless `public_reads` is off."""
    if not request.app.state.public_reads:
        await request.app.state.guard(request)
    return await request.app.state.network.node(request.app.state.node_name)


async def view(node: Any, name: str, **kwargs: Any) -> Any:
    return unwrap(await node.view.remote(name, **kwargs))


async def submit(node: Any, type_: str, payload: dict[str, Any], channel: str) -> Any:
    return unwrap(await node.submit.remote(type_, payload, channel))


async def call(node: Any, service: str, **kwargs: Any) -> Any:
    return unwrap(await node.call.remote(service, **kwargs))


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
