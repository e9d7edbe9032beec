"""Shared HTTP plumbing: request ids, client addresses, key comparison."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import uuid
from collections.abc import Callable, Iterable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rayfleet.security import constant_time_equals, matches_any

__all__ = [
    "BodyLimitMiddleware",
    "BodyPaceMiddleware",
    "BodyTooLarge",
    "FirstRequestIdMiddleware",
    "RequestIdMiddleware",
    "client_ip",
    "constant_time_equals",
    "matches_any",
    "parse_networks",
    "request_id",
]

_INCOMING_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def _uuid_id() -> str:
    return uuid.uuid4().hex


def status_watcher(send: Send) -> tuple[Send, Callable[[], int]]:
    """``send`` wrapped to remember the response's status, and a getter for it (0 until the
    response starts): for middleware that counts or traces by status after the app returns."""
    seen = [0]

    async def watched(message: Message) -> None:
        if message["type"] == "http.response.start":
            seen[0] = message["status"]
        await send(message)

    return watched, lambda: seen[0]


class RequestIdMiddleware:
    """Give every request an id (kept from a well-formed incoming header) and echo it.

    The id is stored in ``scope["state"]["request_id"]`` so handlers and error
    builders read it with :func:`request_id`.
    """

    def __init__(
        self,
        app: ASGIApp,
        header: str = "X-Request-ID",
        generator: Callable[[], str] = _uuid_id,
        trust_incoming: bool = True,
    ) -> None:
        self.app = app
        self.header = header
        self._header_bytes = header.lower().encode()
        self.generator = generator
        self.trust_incoming = trust_incoming

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = None
        if self.trust_incoming:
            for name, value in scope.get("headers", ()):
                if name == self._header_bytes:
                    candidate = value.decode("latin-1")
                    if _INCOMING_ID.match(candidate):
                        rid = candidate
                    break
        if rid is None:
            rid = self.generator()
        scope.setdefault("state", {})["request_id"] = rid
        raw = rid.encode()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != self._header_bytes]
                headers.append((self._header_bytes, raw))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_id)


class FirstRequestIdMiddleware:
    """Keep only the first ``X-Request-ID`` of every answer (Serve's HTTP proxy runs it).

    Serve's proxy has a request-id middleware of its own that appends its id to every
    answer, after the headers the replica sent. The component's `RequestIdMiddleware`
    owns the header (`rayfleet.serving` makes sure every app has one), so the proxy's
    copy is dropped whenever the app already set one; an answer the proxy makes itself
    (no route, no replica) keeps the proxy's. Installed in the proxy by
    ``rayfleet.serving.proxy_middlewares`` (serve.yaml ``controller_options``).
    """

    def __init__(self, app: ASGIApp, header: str = "X-Request-ID") -> None:
        self.app = app
        self._header_bytes = header.lower().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_first(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen = False
                headers = []
                for name, value in message.get("headers", []):
                    if name.lower() == self._header_bytes:
                        if seen:
                            continue
                        seen = True
                    headers.append((name, value))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_first)


def request_id(request: Request) -> str:
    """The id the middleware gave this request (a fresh one if it is not installed)."""
    state = request.scope.setdefault("state", {})
    rid = state.get("request_id")
    if rid is None:
        rid = state["request_id"] = _uuid_id()
    return str(rid)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(values: Iterable[str]) -> list[Network]:
    """Parse addresses or CIDRs (`10.0.0.1`, `10.0.0.0/8`, `::1`) into networks."""
    return [ipaddress.ip_network(v.strip(), strict=False) for v in values if v.strip()]


def _in(addr: str, networks: list[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def client_ip(request: Request, trusted_proxies: list[Network] | None = None) -> str:
    """The client's address: the socket peer, unless that peer is a trusted proxy.

    Behind trusted proxies the address is the right-most entry of
    ``X-Forwarded-For`` that is not itself a trusted proxy, so a client cannot
    choose its own address by sending the header: anything it writes sits to
    the left of what its first trusted proxy appends.
    """
    peer = request.client.host if request.client else ""
    trusted = trusted_proxies or []
    if not trusted or not _in(peer, trusted):
        return peer
    forwarded = ",".join(request.headers.getlist("x-forwarded-for"))
    hops = [h.strip() for h in forwarded.split(",") if h.strip()]
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer
        if not _in(hop, trusted):
            return hop
    return hops[0] if hops else peer


class BodyTooLarge(HTTPException):
    """A streamed body passed the cap while the app was reading it.

    An HTTPException (413), so a framework that wraps body-parsing errors (FastAPI
    turns them into 400) lets it through to the component's own handler.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than the limit of {limit} bytes")


class BodyLimitMiddleware:
    """A cap on request bodies, checked before anything parses them, whatever the framing.

    A declared ``Content-Length`` over `limit` is refused at once, without reading; a
    body without one (``Transfer-Encoding: chunked``) is counted as it arrives and
    refused the moment it passes the cap, so it is never held whole. `refuse(limit)`
    builds the component's own 413 answer (any ASGI app, e.g. a ``JSONResponse`` in the
    component's error shape; `rayfleet.errors.install_body_cap` renders it with the
    app's own handlers). A refused answer carries ``Connection: close``: the server
    stops reading the rest of the body instead of draining it.
    """

    def __init__(self, app: ASGIApp, limit: int, refuse: Callable[[int], ASGIApp]) -> None:
        self.app = app
        self.limit = limit
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers", ()) if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and (len(declared) > 18 or int(declared) > self.limit):
            await self.refuse(self.limit)(scope, receive, _closing(send))
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await (_closing(send) if seen > self.limit else send)(message)

        try:
            await self.app(scope, counted, tracked)
        except BodyTooLarge:
            if started:
                raise
            await self.refuse(self.limit)(scope, receive, _closing(send))


def _closing(send: Send) -> Send:
    """``send`` with ``Connection: close`` on the response start."""

    async def closing(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [h for h in message.get("headers", []) if h[0].lower() != b"connection"]
            message["headers"] = [*headers, (b"connection", b"close")]
        await send(message)

    return closing


_TIMEOUT_BODY = b"Request Timeout: the request body arrived too slowly\n"


class BodyPaceMiddleware:
    """A request body must keep coming: 408 and ``Connection: close`` when it does not.

    For Serve's HTTP proxy (installed by ``rayfleet.serving.proxy_middlewares``), whose
    uvicorn has no body timeout: the proxy pulls the body from the client as it arrives
    (whether the replica reads it yet or not), so a pause here is the client's. The body
    must not stall longer than ``read_timeout`` between two chunks and must be complete
    ``body_timeout`` seconds after the request reached the app plus one second per
    ``min_rate`` bytes received, the rule of the direct listeners
    (`rayfleet.direct_protocol`). On a miss the client gets 408 with
    ``Connection: close`` (uvicorn then closes the socket), the app's ``receive`` gets
    ``http.disconnect`` (Serve cancels the replica's call), and whatever the app still
    sends is dropped.
    """

    def __init__(
        self, app: ASGIApp, read_timeout: float = 30.0, body_timeout: float = 30.0, min_rate: float = 1024.0
    ) -> None:
        if min(read_timeout, body_timeout, min_rate) <= 0:
            raise ValueError("read_timeout, body_timeout and min_rate must be positive")
        self.app = app
        self.read_timeout = read_timeout
        self.body_timeout = body_timeout
        self.min_rate = min_rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not declares_body(scope.get("headers", ())):
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        complete = timed_out = started = False

        async def paced() -> Message:
            nonlocal deadline, complete, timed_out
            if complete or timed_out:
                return await receive() if not timed_out else {"type": "http.disconnect"}
            wait = min(self.read_timeout, deadline - loop.time())
            try:
                message = await asyncio.wait_for(receive(), max(wait, 0.0))
            except TimeoutError:
                timed_out = True
                if not started:
                    await send({"type": "http.response.start", "status": 408, "headers": _TIMEOUT_HEADERS})
                    await send({"type": "http.response.body", "body": _TIMEOUT_BODY})
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                deadline += len(message.get("body", b"")) / self.min_rate
                complete = not message.get("more_body", False)
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if timed_out:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, paced, guarded)


_TIMEOUT_HEADERS = [
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"content-length", str(len(_TIMEOUT_BODY)).encode()),
    (b"connection", b"close"),
]


def declares_body(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether raw (lower-case) request headers announce a body: a non-zero
    ``Content-Length`` or any ``Transfer-Encoding``."""
    for name, value in headers:
        if name == b"content-length":
            return value.strip() not in (b"0", b"")
        if name == b"transfer-encoding":
            return True
    return False
