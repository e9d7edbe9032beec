"""ASGI middleware: per-client-IP rate limit on every request, and the last-resort 500.

Runs before routing and authentication, so unauthenticated requests count too.
Every response carries X-RateLimit-Limit/-Remaining/-Reset (and a Server-Timing
entry with the limiter's round trip, the one remote call on the path); a 429 adds
Retry-After. Both are computed from the window's contents (oldest counted hit +
window), never from a key TTL. When the store is down and the policy is to fail
closed, every request gets 503 except /api/health, which then reports the outage.
"""

from __future__ import annotations

import json
import time
from typing import Any

from starlette._utils import get_route_path
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actors.rate_limit import WindowDecision
from deployments.asn import bulk
from deployments.asn.errors import error_body, new_request_id
from deployments.asn.limiter import Limiter, LimiterUnavailable
from rayfleet.http import Network, client_ip
from rayfleet.logs import get_logger

log = get_logger("asn")

HEALTH_PATH = "/api/health"


def rate_headers(decision: WindowDecision) -> list[tuple[bytes, bytes]]:
    headers = [
        (b"x-ratelimit-limit", str(decision.limit).encode()),
        (b"x-ratelimit-remaining", str(decision.remaining).encode()),
        (b"x-ratelimit-reset", str(decision.reset_epoch).encode()),
    ]
    if not decision.allowed:
        headers.append((b"retry-after", str(decision.retry_after).encode()))
    return headers


async def send_json(send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None once it grows past `limit` bytes (413)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replay(raw: bytes) -> Receive:
    """A `receive` that hands the app the body already read, then waits like the server would."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


class GuardMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        limiter: Limiter,
        trusted_proxies: list[Network],
        on_store_error: str,
        unavailable_retry_after: int,
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.trusted_proxies = trusted_proxies
        self.on_store_error = on_store_error
        self.unavailable_retry_after = unavailable_retry_after

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        rid = state.get("request_id") or state.setdefault("request_id", new_request_id())
        ip = client_ip(Request(scope), self.trusted_proxies)
        state["client_ip"] = ip

        cost, too_large = 1, False
        if scope["method"] == "POST" and get_route_path(scope) == bulk.PATH:
            raw = await read_body(receive, bulk.MAX_BODY_BYTES)
            too_large = raw is None
            if raw is not None:
                cost = bulk.cost(raw)
                receive = replay(raw)
        began = time.perf_counter()
        decision = await self._decide(ip, cost)
        limiter_ms = (time.perf_counter() - began) * 1000
        if decision is None and get_route_path(scope) == HEALTH_PATH:
            await self.app(scope, receive, send)  # so operators see which dependency is down
            return
        if decision is None:
            await send_json(
                send,
                503,
                error_body(503, "rate limiter unavailable; retry shortly", rid),
                [(b"retry-after", str(self.unavailable_retry_after).encode())],
            )
            return
        headers = [*rate_headers(decision), (b"server-timing", f"ratelimit;dur={limiter_ms:.2f}".encode())]
        if cost > decision.limit:  # can never fit in one window: retrying would not help
            message = f"{cost} addresses exceed the rate limit of {decision.limit} per window; send smaller batches"
            await send_json(send, 413, error_body(413, message, rid), headers)
            return
        if not decision.allowed:
            log.info("rate limited", extra={"client_ip": ip, "path": scope.get("path"), "request_id": rid})
            message = f"rate limit of {decision.limit} requests exceeded; retry after {decision.retry_after} s"
            if cost > 1:
                message = (
                    f"{cost} addresses exceed what is left of the rate limit; retry after {decision.retry_after} s"
                )
            await send_json(send, 429, error_body(429, message, rid), headers)
            return
        if too_large:
            await send_json(send, 413, error_body(413, f"body over {bulk.MAX_BODY_BYTES} bytes", rid), headers)
            return

        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = list(message.get("headers", [])) + headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:
            log.error("unhandled error", extra={"request_id": rid, "path": scope.get("path")}, exc_info=exc)
            if started:
                raise
            await send_json(send, 500, error_body(500, "internal error", rid), headers)

    async def _decide(self, ip: str, cost: int) -> WindowDecision | None:
        """The limiter's decision; None means answer 503 (store down and failing closed)."""
        try:
            return await self.limiter.hit(ip, cost) if cost > 1 else await self.limiter.hit(ip)
        except LimiterUnavailable:
            return None
        except Exception as exc:  # the actor (or its node) failed: apply the same policy as Redis
            log.warning("rate-limit store error", extra={"error": type(exc).__name__})
            if self.on_store_error == "closed":
                return None
            return self.limiter.open_decision()
