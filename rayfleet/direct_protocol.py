"""uvicorn's httptools protocol with a header size cap and read timeouts.

uvicorn accepts headers of any size on httptools, keeps a connection that never sends
a byte open forever (its keep-alive timer only starts after a first response), and
waits forever for a request that stops half-way or trickles (headers or body). A
direct listener is exposed to clients with no proxy in front, so each connection gets
(`Limits`):

- closed without an answer when no request starts within ``idle_timeout`` of the
  connection opening (bytes that start no request, such as bare CRLFs, do not count);
  between two requests uvicorn's keep-alive timer (``keep_alive``) does the same;
- 431 when the request line plus headers exceed ``max_header_bytes``;
- 408 when the headers are not complete ``read_timeout`` seconds after the first byte
  of the request;
- 408 when the body stalls for ``read_timeout`` between two chunks, or when it is not
  complete by its deadline: ``body_timeout`` after the headers, plus one second for
  every ``body_min_rate`` bytes received (Apache's ``mod_reqtimeout`` rule: a client
  must keep sending at least that fast on average). While the server itself has
  stopped reading (the app is not consuming the body), the client is not blamed.

Every rejection closes the connection.

It also counts the requests the listener has received and not yet answered
(``Pending``): from a request's first byte to the end of its response, queued or
running. That is the direct load Serve's autoscaler sees. An ASGI-level count would
miss it: a handler that never awaits runs start to finish in one step of the event
loop, so a count taken by another task on that loop always finds it at zero, however
many requests wait in the sockets.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from rayfleet.http import declares_body

LINGER = 1.0
"""Seconds a rejected connection is still read (and dropped) after its answer, before it is closed."""
_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class _Rejected(Exception):
    pass


@dataclass(frozen=True)
class Limits:
    """A direct listener's connection limits (seconds, bytes, bytes per second)."""

    max_header_bytes: int = 65536
    read_timeout: float = 30.0
    idle_timeout: float = 15.0
    keep_alive: float = 5.0
    body_timeout: float = 30.0
    body_min_rate: float = 1024.0

    def __post_init__(self) -> None:
        if min(self.read_timeout, self.idle_timeout, self.keep_alive, self.body_timeout, self.body_min_rate) <= 0:
            raise ValueError("read_timeout, idle_timeout, keep_alive, body_timeout and body_min_rate must be positive")
        if self.max_header_bytes < 1024:
            raise ValueError("max_header_bytes must be at least 1024")


class Pending:
    """Requests received on a listener and not yet answered."""

    def __init__(self) -> None:
        self.count = 0


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    limits = Limits()
    pending = Pending()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_bytes = 0
        self._rejected = False
        self._read_timer: asyncio.TimerHandle | None = None
        self._body_deadline = 0.0  # loop time by which the current body must be complete (0: no body)
        self._body_received = 0
        self._requests = 0  # received on this connection, not yet answered (pipelining: several)
        super().connection_made(transport)
        # a connection that never starts a request: closed, nothing to answer
        self._idle(self.limits.idle_timeout)

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
        if not self._requests and not self._rejected and not self.transport.is_closing():
            # uvicorn's keep-alive timer restarts on any byte (a CRLF every few seconds holds it): ours does not
            self._idle(self.limits.keep_alive)

    def _arm(self) -> None:
        """The read timer: ``read_timeout`` from now, or sooner when the body's deadline comes first."""
        self._disarm()
        when = self.loop.time() + self.limits.read_timeout
        if self._body_deadline:
            when = min(when, self._body_deadline)
        self._read_timer = self.loop.call_at(when, self._on_read_timeout)

    def _idle(self, seconds: float) -> None:
        self._disarm()
        self._read_timer = self.loop.call_later(seconds, self._on_idle)

    def _on_idle(self) -> None:
        self._read_timer = None
        if not self._requests and not self._rejected:
            self._rejected = True
            self.transport.close()

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
        if self.transport.can_write_eof() and not self.transport.is_closing():
            # a lingering close: the answer is followed by FIN, what the client still sends is
            # read and dropped for a moment, so its kernel does not discard the answer on a reset
            self.flow.resume_reading()
            self.transport.write_eof()
            self.loop.call_later(LINGER, self.transport.close)
        else:
            self.transport.close()

    def _on_read_timeout(self) -> None:
        self._read_timer = None
        if self.flow.read_paused and self._body_deadline:
            # the app is not reading the body: the client cannot send, so it is not late
            self._body_deadline = max(self._body_deadline, self.loop.time() + self.limits.read_timeout)
            self._arm()
            return
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
        if self._header_bytes > self.limits.max_header_bytes:
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
        if not self._rejected and declares_body(self.headers):
            self._body_received = 0
            self._body_deadline = self.loop.time() + self.limits.body_timeout
            self._arm()

    def on_body(self, body: bytes) -> None:
        if self._read_timer is not None:
            self._body_received += len(body)
            self._body_deadline += len(body) / self.limits.body_min_rate
            self._arm()
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        self._body_deadline = 0.0
        super().on_message_complete()


def guarded_protocol(limits: Limits, pending: Pending) -> Any:
    """A protocol class with these limits, counting into ``pending`` (uvicorn's ``http=`` accepts a class)."""
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), {"limits": limits, "pending": pending})
