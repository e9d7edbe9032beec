"""The standalone metrics exporter (``server.metrics``): ``GET /metrics`` on ``bind:port``.

It sits outside the application (spec 001 §A.2): no authentication, no rate limit, no
middleware, so keep ``bind`` on loopback (the default ``127.0.0.1``) or a private network.
The metrics are the cluster-wide families of ``/metrics``. Every replica tries to bind the
port; the one that gets it serves, the others retry every ``RETRY_SECONDS`` and take
over if it goes away. A minimal HTTP/1.1 responder (one request per connection, request
head capped at 8 KB and 5 s): anything but ``GET /metrics`` answers 404 or 405.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from rayfleet.logs import get_logger
from rayfleet.metrics import CONTENT_TYPE

log = get_logger("llm_gateway")

RETRY_SECONDS = 5.0
MAX_HEAD = 8192
READ_TIMEOUT = 5.0


def _response(status: str, body: bytes, content_type: str = "text/plain; charset=utf-8") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


class MetricsExporter:
    def __init__(self, render: Callable[[], Awaitable[bytes]], bind: str, port: int) -> None:
        self.render = render
        self.bind = bind
        self.port = port
        self.serving = False

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
            method, path, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            if path.split("?", 1)[0] != "/metrics":
                writer.write(_response("404 Not Found", b"not found\n"))
            elif method != "GET":
                writer.write(_response("405 Method Not Allowed", b"method not allowed\n"))
            else:
                writer.write(_response("200 OK", await self.render(), CONTENT_TYPE))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            writer.write(_response("400 Bad Request", b"bad request\n"))
        except Exception:
            log.warning("metrics exporter request failed", exc_info=True)
            writer.write(_response("500 Internal Server Error", b"error\n"))
        finally:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()
                await writer.wait_closed()

    async def run(self) -> None:
        """Bind when the port is free (retrying while another replica holds it), then serve forever."""
        while True:
            try:
                server = await asyncio.start_server(self._handle, self.bind, self.port, limit=MAX_HEAD)
            except OSError:
                await asyncio.sleep(RETRY_SECONDS)
                continue
            self.serving = True
            log.info("metrics exporter listening", extra={"bind": self.bind, "port": self.port})
            try:
                async with server:
                    await server.serve_forever()
            finally:
                self.serving = False
