"""The WebSocket feed: the node's notifications for the channels a client subscribed to."""

from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from actors.tasknet.node_actor import TaskNode
from deployments.tasknet.state import TasknetState
from rayfleet.http import constant_time_equals
from rayfleet.state import call

router = APIRouter(tags=["network"])


def _state(websocket: WebSocket) -> TasknetState:
    state = websocket.app.state.component
    if not isinstance(state, TasknetState):
        raise TypeError("the app's component state is not a TasknetState")
    return state


def _allowed(ctx: TasknetState, websocket: WebSocket) -> bool:
    """Public reads, or the node's token in `?token=`."""
    if ctx.config.public_reads:
        return True
    token = websocket.query_params.get("token", "")
    return bool(ctx.token()) and constant_time_equals(token, ctx.token())


async def _subscriptions(websocket: WebSocket, subscribed: set[str]) -> None:
    """Read `{type: subscribe|unsubscribe, channel}` messages until the client leaves."""
    while True:
        try:
            message = json.loads(await websocket.receive_text())
        except ValueError:
            await websocket.send_json({"type": "error", "data": {"detail": "messages are JSON"}})
            continue
        if isinstance(message, dict) and message.get("type") == "subscribe" and isinstance(message.get("channel"), str):
            subscribed.add(message["channel"][:64])
            await websocket.send_json({"type": "subscribed", "data": {"channel": message["channel"][:64]}})
        elif isinstance(message, dict) and message.get("type") == "unsubscribe":
            subscribed.discard(str(message.get("channel")))
        else:
            await websocket.send_json({"type": "error", "data": {"detail": "expected {type: subscribe, channel}"}})


@router.websocket("/ws")
async def feed(websocket: WebSocket) -> None:
    """Events `{type, data}` of the channels the client subscribed to with `{type: subscribe, channel}`."""
    ctx = _state(websocket)
    if not _allowed(ctx, websocket):
        await websocket.close(code=1008)
        return
    node = await ctx.handle()
    await websocket.accept()
    subscribed: set[str] = set()
    cursor, _ = await call(node, TaskNode.wait_notifications, 1 << 62, 0)
    await websocket.send_json({"type": "connected", "data": {"node": ctx.node}})
    reader_task = asyncio.create_task(_subscriptions(websocket, subscribed))
    try:
        while not reader_task.done():
            cursor, items = await call(node, TaskNode.wait_notifications, cursor, ctx.config.ws_poll_s)
            for chan, message in items:
                if chan in subscribed:
                    await websocket.send_json(message)
        reader_task.result()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        reader_task.cancel()
