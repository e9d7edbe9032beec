"""HTTP peering with nodes of other clusters: join, push, pull, and a validator's Raft messages and
attestations (signed envelopes, actors/tasknet/peering.py).

These routes need no node token: every request is an envelope signed by the remote node's key,
and what it carries are events signed by their authors. A peer relays events; it never writes
as this node (only this node's key signs this node's events). Raft messages and attestations are
taken only from a peer that is a validator here, each message only from the node that signed it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Body

from actors.tasknet.node_actor import TaskNode
from deployments.tasknet.errors import unwrap
from deployments.tasknet.routes.common import ERRORS, Ctx, Open, Reader
from rayfleet.state import call

router = APIRouter(tags=["peering"], responses=ERRORS)

Envelope = Body(description="{route, from, key, to, ts, nonce, body, sig}: signed by the sending node")


PEER_ROUTES: dict[str, tuple[Callable[[TaskNode, Any], Awaitable[dict[str, Any]]], str]] = {
    "join": (TaskNode.peer_join, "A node of another cluster presents itself"),
    "events": (TaskNode.peer_events, "A joined peer pushes a batch of signed events"),
    "pull": (TaskNode.peer_pull, "A joined peer asks for what its version vector lacks"),
    "checkpoint": (TaskNode.peer_checkpoint, "A joined peer asks for the certified checkpoint"),
    "raft": (TaskNode.peer_raft, "A joined validator sends a Raft message (any type); the answer holds Raft's"),
    "attest": (TaskNode.peer_attest, "A joined validator sends its attestations"),
    "anonymous": (TaskNode.peer_anonymous, "A joined peer hands on an anonymous vote sealed to this node"),
    "forward": (TaskNode.peer_forward, "A joined peer hands on a vote sealed to an exit relay, to pass on"),
    "propose": (TaskNode.peer_propose, "A joined validator forwards a proposal to this node, the Raft leader"),
}
"""`POST /peer/<route>`: the node actor's method that opens the envelope, and the route's summary."""


def _peer_route(method: Callable[[TaskNode, Any], Awaitable[dict[str, Any]]]) -> Callable[..., Awaitable[Any]]:
    async def handle(ctx: Ctx, envelope: dict[str, Any] = Envelope) -> Any:
        return unwrap(await call(await ctx.handle(), method, envelope))

    return handle


for _route, (_method, _summary) in PEER_ROUTES.items():
    router.add_api_route(
        f"/peer/{_route}", _peer_route(_method), methods=["POST"], response_model=Open, summary=_summary
    )


@router.get("/peers", response_model=Open, summary="Remote peers: who joined this node, whom it dials")
async def peers(node: Reader) -> Any:
    return await call(node, TaskNode.peers_view)
