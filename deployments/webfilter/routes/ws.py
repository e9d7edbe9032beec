"""`/api/ws/logs?token=`: the live log stream.

The token (from GET /api/ws-token) is consumed before the upgrade: a missing, used or expired
token gets HTTP 401 and no WebSocket. Messages are JSON objects:
  {"type": "log", "data": {timestamp, unix_timestamp, client_ip, method, destination, host, status,
   squid_status, bytes, elapsed_ms, blocked, rule}}
  {"type": "dropped", "count": n}   this client was too slow and lost n messages
Each replica polls the log store actor once for all its clients and gives every client a
bounded queue: a slow client loses messages, the stream never waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from actors.webfilter.authstate import AuthState
from deployments.webfilter.errors import ApiError, error_response
from deployments.webfilter.routes.common import WsCtx
from deployments.webfilter.stream import Client
from rayfleet.state import call

router = APIRouter(tags=["stream"])  # the fan-out behind the stream: deployments/webfilter/stream.py


async def _sender(websocket: WebSocket, client: Client) -> None:
    while True:
        text = await client.queue.get()
        if client.dropped:
            await websocket.send_text(json.dumps({"type": "dropped", "count": client.dropped}))
            client.dropped = 0
        await websocket.send_text(text)


@router.websocket("/api/ws/logs")
async def ws_logs(websocket: WebSocket, context: WsCtx) -> None:
    token = websocket.query_params.get("token", "")
    protocols = websocket.headers.get("sec-websocket-protocol", "")
    for proto in protocols.split(","):
        if proto.strip().startswith("spm-ws-token."):
            token = token or proto.strip().split(".", 1)[1]
    if not token or len(token) > 200 or not await call(context.auth, AuthState.consume_ws_token, token):
        response = error_response(401, "invalid or expired stream token")
        await websocket.send_denial_response(response)
        return
    await websocket.accept()
    fanout = context.fanout
    client = fanout.join()
    sender = asyncio.create_task(_sender(websocket, client))
    try:
        while True:
            await websocket.receive_text()
    except WebSocketDisconnect:
        pass
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
        fanout.leave(client)


async def ws_logs_http() -> None:
    """A plain HTTP request here gets 426: the stream is only served over a WebSocket upgrade."""
    raise ApiError(426, "this route needs a WebSocket upgrade (GET /api/ws-token, then ws://.../api/ws/logs?token=)")


for _method in ("GET", "WEBSOCKET"):
    router.add_api_route(
        "/api/ws/logs",
        ws_logs_http,
        methods=[_method],
        operation_id=f"ws_logs_{_method.lower()}",
        summary="Live log stream: WebSocket upgrade with ?token= (from GET /api/ws-token)",
        description=__doc__,
        status_code=426,
        responses={401: {"description": "missing, used or expired token (before the upgrade)"}},
    )
