"""uvicorn's httptools protocol with a header size cap and read timeouts.

uvicorn accepts headers of any size on httptools and waits forever for a request
that stops half-way (headers or body). A direct listener is exposed to clients with
no proxy in front, so each connection gets:

- 431 when the request line plus headers exceed ``max_header_bytes``;
- 408 when the headers are not complete ``read_timeout`` seconds after the first byte
  of the request, or when the body stalls for ``read_timeout`` between two chunks
  (the connection is closed in both cases).

It also counts the requests the listener has received and not yet answered
(``Pending``): from a request's first byte to the end of its response, queued or
running. That is the direct load Serve's autoscaler sees. An ASGI-level count would
miss it: a handler that never awaits runs start to finish in one step of the event
loop, so a count taken by another task on that loop always finds it at zero, however
many requests wait in the sockets.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class _Rejected(Exception):
    pass


class Pending:
    """Requests received on a listener and not yet answered."""

    def __init__(self) -> None:
        self.count = 0


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    max_header_bytes = 65536
    read_timeout = 30.0
    pending = Pending()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_bytes = 0
        self._rejected = False
        self._read_timer: asyncio.TimerHandle | None = None
        self._requests = 0  # received on this connection, not yet answered (pipelining: several)
        super().connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.pending.count -= self._requests
        self._requests = 0
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        # the connection leaves this protocol for the WebSocket one: no request of it is pending any more
        self.pending.count -= self._requests
        self._requests = 0
        super().handle_websocket_upgrade()

    def on_response_complete(self) -> None:
        if self._requests:
            self._requests -= 1
            self.pending.count -= 1
        super().on_response_complete()

    def _arm(self) -> None:
        self._disarm()
        self._read_timer = self.loop.call_later(self.read_timeout, self._on_read_timeout)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _reject(self, status: int) -> None:
        """Answer ``status`` (unless a response already started) and close the connection."""
        if self._rejected:
            return
        self._rejected = True
        self._disarm()
        cycle = self.cycle
        if cycle is None or not cycle.response_started:
            reason = _REASONS[status]
            body = reason + b"\n"
            self.transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
                b"connection: close\r\n\r\n%s" % (status, reason, len(body), body)
            )
        if cycle is not None:
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    def _on_read_timeout(self) -> None:
        self._read_timer = None
        self._reject(408)

    def data_received(self, data: bytes) -> None:
        if self._rejected:
            return
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        if not self._rejected:
            super().send_400_response(msg)

    def on_message_begin(self) -> None:
        self._header_bytes = 0
        self._requests += 1
        self.pending.count += 1
        self._arm()
        super().on_message_begin()

    def _count(self, n: int) -> None:
        self._header_bytes += n
        if self._header_bytes > self.max_header_bytes:
            self._reject(431)
            raise _Rejected

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
        if not self._rejected and self._expects_body():
            self._arm()

    def _expects_body(self) -> bool:
        for name, value in self.headers:
            if name == b"content-length":
                return value.strip() not in (b"0", b"")
            if name == b"transfer-encoding":
                return True
        return False

    def on_body(self, body: bytes) -> None:
        if self._read_timer is not None:
            self._arm()
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()


def guarded_protocol(max_header_bytes: int, read_timeout: float, pending: Pending) -> Any:
    """A protocol class with these limits, counting into ``pending`` (uvicorn's ``http=`` accepts a class)."""
    return type(
        "GuardedHttpToolsProtocol",
        (GuardedHttpToolsProtocol,),
        {"max_header_bytes": max_header_bytes, "read_timeout": read_timeout, "pending": pending},
    )
