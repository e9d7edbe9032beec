"""HTTP peering with nodes of other clusters: join, push, pull (signed envelopes, actors/tasknet/peering.py).

These routes need no node token: every request is an envelope signed by the remote node's key,
and what it carries are events signed by their authors. A peer relays events; it never writes
as this node (only this node's key signs this node's events).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body

from actors.tasknet.node_actor import TaskNode
from deployments.tasknet.errors import unwrap
from deployments.tasknet.routes.common import ERRORS, Ctx, Open, Reader
from rayfleet.state import call

router = APIRouter(tags=["peering"], responses=ERRORS)

Envelope = Body(description="{route, from, key, to, ts, nonce, body, sig}: signed by the sending node")


@router.post("/peer/join", response_model=Open, summary="A node of another cluster presents itself")
async def join(ctx: Ctx, envelope: dict[str, Any] = Envelope) -> Any:
    return unwrap(await call(await ctx.handle(), TaskNode.peer_join, envelope))


@router.post("/peer/events", response_model=Open, summary="A joined peer pushes a batch of signed events")
async def events(ctx: Ctx, envelope: dict[str, Any] = Envelope) -> Any:
    return unwrap(await call(await ctx.handle(), TaskNode.peer_events, envelope))


@router.post("/peer/pull", response_model=Open, summary="A joined peer asks for what its version vector lacks")
async def pull(ctx: Ctx, envelope: dict[str, Any] = Envelope) -> Any:
    return unwrap(await call(await ctx.handle(), TaskNode.peer_pull, envelope))


@router.post("/peer/checkpoint", response_model=Open, summary="A joined peer asks for the certified checkpoint")
async def checkpoint(ctx: Ctx, envelope: dict[str, Any] = Envelope) -> Any:
    return unwrap(await call(await ctx.handle(), TaskNode.peer_checkpoint, envelope))


@router.get("/peers", response_model=Open, summary="Remote peers: who joined this node, whom it dials")
async def peers(node: Reader) -> Any:
    return await call(node, TaskNode.peers_view)
