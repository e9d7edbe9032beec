"""Control-plane changes in the audit trail: who changed what, through which route, with what result.

An ASGI middleware around the app. A request that may change something (not GET, HEAD or
OPTIONS) under ``/api/v1/`` or ``/admin/`` and that passed the control-plane guard (which
leaves the caller on ``request.state.control_subject``: a key fingerprint or a session
subject) is recorded once it has answered below 400, as a ``control`` record in the same
hash chain as the requests: ``action`` (method and route template, e.g.
``DELETE /api/v1/keys/{key_id}``), ``params`` (the path parameters), ``subject``,
``client_ip`` and ``status``. Bodies are not recorded (a new key's secret is in one).
Inference requests pass straight through.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deployments.llm_gateway.audit import AuditTrail
from rayfleet.http import client_ip

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
CONTROL = ("/api/v1/", "/admin/")


class ControlAudit:
    def __init__(self, app: ASGIApp, trail: AuditTrail) -> None:
        self.app = app
        self.trail = trail

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE or not any(p in scope["path"] for p in CONTROL):
            await self.app(scope, receive, send)
            return
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self.app(scope, receive, sending)
        subject = scope.get("state", {}).get("control_subject")
        if subject is not None and 0 < status < 400:
            self.trail.add(time.time(), _record(scope, subject, status), kind="control")


def _record(scope: Scope, subject: str, status: int) -> dict[str, Any]:
    route = scope.get("route")
    template = getattr(route, "path", scope["path"])
    return {
        "action": f"{scope['method']} {template}",
        "params": dict(scope.get("path_params") or {}),
        "subject": subject,
        "client_ip": client_ip(Request(scope)),
        "status": status,
    }
