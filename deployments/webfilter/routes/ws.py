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
from typing import Any

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from actors.webfilter.logparse import mask_ip
from deployments.webfilter.context import Context
from deployments.webfilter.errors import ApiError, error_response

router = APIRouter(tags=["stream"])
QUEUE_SIZE = 1024
POLL_SECONDS = 0.1


class Client:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[str] = asyncio.Queue(QUEUE_SIZE)
        self.dropped = 0

    def offer(self, text: str) -> None:
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.dropped += 1


class Fanout:
    """One poller per replica feeding every connected client's queue."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.clients: set[Client] = set()
        self.task: asyncio.Task[None] | None = None
        self.seq = -1

    def join(self) -> Client:
        client = Client()
        self.clients.add(client)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())
        return client

    def leave(self, client: Client) -> None:
        self.clients.discard(client)

    async def _run(self) -> None:
        if self.seq < 0:
            self.seq, _ = await self.context.logs.since.remote(1 << 62)
        while self.clients:
            seq, rows = await self.context.logs.since.remote(self.seq)
            self.seq = seq
            if rows:
                gdpr = (await asyncio.to_thread(self.context.store.settings))["gdpr_mode"]
                for row in rows:
                    data: dict[str, Any] = dict(row)
                    if gdpr:
                        data["client_ip"] = mask_ip(data["client_ip"])
                    text = json.dumps({"type": "log", "data": data})
                    for client in list(self.clients):
                        client.offer(text)
            await asyncio.sleep(POLL_SECONDS)


async def _sender(websocket: WebSocket, client: Client) -> None:
    while True:
        text = await client.queue.get()
        if client.dropped:
            await websocket.send_text(json.dumps({"type": "dropped", "count": client.dropped}))
            client.dropped = 0
        await websocket.send_text(text)


@router.websocket("/api/ws/logs")
async def ws_logs(websocket: WebSocket) -> None:
    context: Context = websocket.app.state.ctx
    token = websocket.query_params.get("token", "")
    protocols = websocket.headers.get("sec-websocket-protocol", "")
    for proto in protocols.split(","):
        if proto.strip().startswith("spm-ws-token."):
            token = token or proto.strip().split(".", 1)[1]
    if not token or len(token) > 200 or not await context.auth.consume_ws_token.remote(token):
        response = error_response(401, "invalid or expired stream token")
        await websocket.send_denial_response(response)
        return
    await websocket.accept()
    fanout: Fanout = websocket.app.state.fanout
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
