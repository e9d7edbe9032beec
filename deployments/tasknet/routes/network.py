"""Identity, state, statistics, peer signalling, WebRTC and Raft messages."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from pydantic import Field

from actors.tasknet.node_actor import TaskNode
from deployments.tasknet.dashboard import render
from deployments.tasknet.errors import unwrap
from deployments.tasknet.routes.common import ERRORS, Ctx, Message, Open, Reader, Strict, Writer, service, view
from rayfleet.state import call

router = APIRouter(tags=["network"], responses=ERRORS)


class WhoAmI(Open):
    node_id: str
    public_key: str


class HandshakeIn(Strict):
    node_id: str = Field(min_length=1, max_length=64)
    public_key: str = Field(min_length=1, max_length=64)


class RelayIn(Strict):
    target_peer_id: str = Field(min_length=1, max_length=64)
    signal_data: dict[str, Any] = Field(default_factory=dict)


class ReceiveIn(Strict):
    from_peer_id: str = Field(min_length=1, max_length=64)
    signal_data: dict[str, Any]


class RequestVoteIn(Strict):
    term: int = Field(ge=0)
    candidate_id: str = Field(max_length=64)
    last_log_index: int = Field(ge=0)
    last_log_term: int = Field(ge=0)
    signature: str = Field("", max_length=200)


class AppendEntriesIn(Strict):
    term: int = Field(ge=0)
    leader_id: str = Field(max_length=64)
    prev_log_index: int = Field(ge=0)
    prev_log_term: int = Field(ge=0)
    entries: list[dict[str, Any]] = Field(default_factory=list, max_length=64)
    leader_commit: int = Field(ge=0)
    signature: str = Field("", max_length=200)


class AttestationIn(Strict):
    proposal_id: str = Field(min_length=1, max_length=128)
    raft_index: int = Field(ge=1)
    term: int = Field(ge=0)
    channel: str = Field("general", max_length=64)
    by: str = Field("", max_length=64)
    signatures: dict[str, str] = Field(max_length=64)


class AttestIn(Strict):
    sender: str = Field(max_length=64)
    attestations: list[AttestationIn] = Field(min_length=1, max_length=64)
    signature: str = Field("", max_length=200)


class AttestOut(Open):
    ratified: int


@router.get("/", response_class=HTMLResponse, summary="HTML dashboard")
async def dashboard(node: Reader) -> HTMLResponse:
    state = await view(node, "state")
    me = await call(node, TaskNode.whoami)
    stats = await view(node, "network_stats")
    return HTMLResponse(render(me, state, stats))


@router.get("/health", response_model=Open)
async def health(ctx: Ctx) -> Any:
    node = await ctx.handle()
    me = await call(node, TaskNode.whoami)
    raft = await call(node, TaskNode.raft_status)
    return {
        "status": "ok",
        "node": ctx.node,
        "node_id": me["node_id"],
        "raft_role": raft.get("role"),
        "raft_term": raft.get("term", 0),
        "raft_snapshot_index": raft.get("snapshot_index", 0),
    }


@router.get("/whoami", response_model=WhoAmI)
async def whoami(node: Reader) -> Any:
    return await call(node, TaskNode.whoami)


@router.get("/state", response_model=Open)
async def state(node: Reader) -> Any:
    return await view(node, "state")


@router.get("/channels", response_model=list[str])
async def channels(node: Reader) -> Any:
    return await view(node, "channels")


@router.get("/network/stats", response_model=Open)
async def network_stats(node: Reader) -> Any:
    return await view(node, "network_stats")


@router.get("/pubsub/stats", response_model=Open)
async def pubsub_stats(node: Reader) -> Any:
    return await view(node, "pubsub_stats")


@router.get("/webrtc/connections", response_model=Open, tags=["webrtc"])
async def webrtc_connections(node: Reader) -> Any:
    return await service(node, "signal", action="connections")


@router.get("/webrtc/ice-metrics", response_model=Open, tags=["webrtc"])
async def webrtc_ice(node: Reader) -> Any:
    return await service(node, "signal", action="ice_metrics")


@router.post("/bootstrap/handshake", response_model=Message, tags=["webrtc"])
async def handshake(node: Reader, body: HandshakeIn) -> Any:
    return await service(node, "signal", action="handshake", node_id=body.node_id, public_key=body.public_key)


@router.post(
    "/p2p/signal/relay", response_model=Message, tags=["webrtc"], summary="Acting as this node: forward a signal"
)
async def relay(node: Writer, body: RelayIn) -> Any:
    return await service(
        node, "signal", action="relay", target_peer_id=body.target_peer_id, signal_data=body.signal_data
    )


@router.post("/p2p/signal/receive", response_model=Message, tags=["webrtc"], summary="A signal signed by its sender")
async def receive(node: Reader, body: ReceiveIn) -> Any:
    return await service(node, "signal", action="receive", from_peer_id=body.from_peer_id, signal_data=body.signal_data)


@router.post("/raft/request_vote", response_model=Open, tags=["raft"], summary="Signed by the candidate")
async def request_vote(node: Reader, body: RequestVoteIn) -> Any:
    return unwrap(await call(node, TaskNode.raft_http, "request_vote", body.model_dump()))


@router.post("/raft/append_entries", response_model=Open, tags=["raft"], summary="Signed by the leader")
async def append_entries(node: Reader, body: AppendEntriesIn) -> Any:
    return unwrap(await call(node, TaskNode.raft_http, "append_entries", body.model_dump()))


@router.post("/raft/attest", response_model=AttestOut, tags=["raft"], summary="Signed by a validator")
async def attest(node: Reader, body: AttestIn) -> Any:
    return unwrap(await call(node, TaskNode.attest_http, body.model_dump()))


@router.get("/state/digest", response_model=Open, summary="SHA-256 of the state (equal on nodes that agree)")
async def state_digest(node: Reader) -> Any:
    return await view(node, "digest")
