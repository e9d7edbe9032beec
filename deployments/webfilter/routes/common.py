"""What every web filter router shares: the component state, the client's address, the signed-in user."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query, Request, WebSocket

from actors.webfilter.logparse import mask_ip
from deployments.webfilter import auth
from deployments.webfilter.state import WebfilterState
from rayfleet.appstate import state_of
from rayfleet.http import client_ip

Ctx = Annotated[WebfilterState, Depends(state_of(WebfilterState))]


@dataclass
class LogQuery:
    """The paging and filters the log routes (HTTP and DNS) share."""

    limit: Annotated[int, Query(ge=1, le=1000)] = 100
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0
    blocked: bool | None = None
    client_ip: Annotated[str | None, Query(max_length=100)] = None


LogPage = Annotated[LogQuery, Depends()]


def _websocket_state(websocket: WebSocket) -> WebfilterState:
    """`Ctx` for a WebSocket route (FastAPI hands WebSocket routes no `Request`)."""
    state = getattr(websocket.app.state, "component", None)
    if not isinstance(state, WebfilterState):
        raise TypeError(f"the app's component state is {type(state).__name__}, not WebfilterState")
    return state


WsCtx = Annotated[WebfilterState, Depends(_websocket_state)]


def _peer(request: Request, context: Ctx) -> str:
    """The client's address: the socket peer, or what a trusted proxy says."""
    return client_ip(request, context.trusted)


Peer = Annotated[str, Depends(_peer)]


async def _user(request: Request, context: Ctx, ip: Peer) -> auth.Principal:
    return await auth.authenticate(context, ip, request.headers.get("authorization", ""))


async def _alert_sender(request: Request, context: Ctx, ip: Peer) -> auth.Principal:
    return await auth.authenticate_alert(context, ip, request.headers.get("authorization", ""))


User = Annotated[auth.Principal, Depends(_user)]
SIGNED_IN = Depends(_user)  # for a router's `dependencies=[...]`
AlertSender = Annotated[auth.Principal, Depends(_alert_sender)]


async def gdpr_masked(context: WebfilterState, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` with the last octet of each `client_ip` zeroed when `gdpr_mode` is on (in place)."""
    if (await context.db(context.store.settings))["gdpr_mode"]:
        for row in rows:
            row["client_ip"] = mask_ip(row["client_ip"])
    return rows
