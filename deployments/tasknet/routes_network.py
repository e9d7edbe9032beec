"""Identity, state, statistics, peer signalling, WebRTC, Raft messages and the WebSocket feed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Depends, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse
from pydantic import Field

from deployments.tasknet.api import ERRORS, Message, Open, Strict, call, reader, view, writer
from deployments.tasknet.dashboard import render
from deployments.tasknet.errors import unwrap
from rayfleet.http import constant_time_equals

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


@router.get("/", response_class=HTMLResponse, summary="HTML dashboard")
async def dashboard(node: Any = Depends(reader)) -> HTMLResponse:
    state = await view(node, "state")
    me = await node.whoami.remote()
    stats = await view(node, "network_stats")
    return HTMLResponse(render(me, state, stats))


@router.get("/health", response_model=Open)
async def health(request: Request) -> Any:
    node = await request.app.state.network.node(request.app.state.node_name)
    me = await node.whoami.remote()
    raft = await node.raft_status.remote()
    return {
        "status": "ok",
        "node": request.app.state.node_name,
        "node_id": me["node_id"],
        "raft_role": raft.get("role"),
    }


@router.get("/whoami", response_model=WhoAmI)
async def whoami(node: Any = Depends(reader)) -> Any:
    return await node.whoami.remote()


@router.get("/state", response_model=Open)
async def state(node: Any = Depends(reader)) -> Any:
    return await view(node, "state")


@router.get("/channels", response_model=list[str])
async def channels(node: Any = Depends(reader)) -> Any:
    return await view(node, "channels")


@router.get("/network/stats", response_model=Open)
async def network_stats(node: Any = Depends(reader)) -> Any:
    return await view(node, "network_stats")


@router.get("/pubsub/stats", response_model=Open)
async def pubsub_stats(node: Any = Depends(reader)) -> Any:
    return await view(node, "pubsub_stats")


@router.get("/webrtc/connections", response_model=Open, tags=["webrtc"])
async def webrtc_connections(node: Any = Depends(reader)) -> Any:
    return await call(node, "signal", action="connections")


@router.get("/webrtc/ice-metrics", response_model=Open, tags=["webrtc"])
async def webrtc_ice(node: Any = Depends(reader)) -> Any:
    return await call(node, "signal", action="ice_metrics")


@router.post("/bootstrap/handshake", response_model=Message, tags=["webrtc"])
async def handshake(body: HandshakeIn, node: Any = Depends(reader)) -> Any:
    return await call(node, "signal", action="handshake", node_id=body.node_id, public_key=body.public_key)


@router.post(
    "/p2p/signal/relay", response_model=Message, tags=["webrtc"], summary="Acting as this node: forward a signal"
)
async def relay(body: RelayIn, node: Any = Depends(writer)) -> Any:
    return await call(node, "signal", action="relay", target_peer_id=body.target_peer_id, signal_data=body.signal_data)


@router.post("/p2p/signal/receive", response_model=Message, tags=["webrtc"], summary="A signal signed by its sender")
async def receive(body: ReceiveIn, node: Any = Depends(reader)) -> Any:
    return await call(node, "signal", action="receive", from_peer_id=body.from_peer_id, signal_data=body.signal_data)


@router.post("/raft/request_vote", response_model=Open, tags=["raft"], summary="Signed by the candidate")
async def request_vote(body: RequestVoteIn, node: Any = Depends(reader)) -> Any:
    return unwrap(await node.raft_http.remote("request_vote", body.model_dump()))


@router.post("/raft/append_entries", response_model=Open, tags=["raft"], summary="Signed by the leader")
async def append_entries(body: AppendEntriesIn, node: Any = Depends(reader)) -> Any:
    return unwrap(await node.raft_http.remote("append_entries", body.model_dump()))


@router.websocket("/ws")
async def feed(websocket: WebSocket) -> None:
    """Events `{type, data}` of the channels the client subscribed to with `{type: subscribe, channel}`."""
    app = websocket.app
    if not app.state.public_reads:
        token = websocket.query_params.get("token", "")
        if not app.state.token() or not constant_time_equals(token, app.state.token()):
            await websocket.close(code=1008)
            return
    node = await app.state.network.node(app.state.node_name)
    await websocket.accept()
    subscribed: set[str] = set()
    cursor, _ = await node.wait_notifications.remote(1 << 62, 0)
    await websocket.send_json({"type": "connected", "data": {"node": app.state.node_name}})

    async def read() -> None:
        while True:
            try:
                message = json.loads(await websocket.receive_text())
            except ValueError:
                await websocket.send_json({"type": "error", "data": {"detail": "messages are JSON"}})
                continue
            if (
                isinstance(message, dict)
                and message.get("type") == "subscribe"
                and isinstance(message.get("channel"), str)
            ):
                subscribed.add(message["channel"][:64])
                await websocket.send_json({"type": "subscribed", "data": {"channel": message["channel"][:64]}})
            elif isinstance(message, dict) and message.get("type") == "unsubscribe":
                subscribed.discard(str(message.get("channel")))
            else:
                await websocket.send_json({"type": "error", "data": {"detail": "expected {type: subscribe, channel}"}})

    reader_task = asyncio.create_task(read())
    try:
        while not reader_task.done():
            cursor, items = await node.wait_notifications.remote(cursor, app.state.ws_poll_s)
            for chan, message in items:
                if chan in subscribed:
                    await websocket.send_json(message)
        reader_task.result()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        reader_task.cancel()
