"""Real loopback servers the tests talk to: a webhook receiver and the ASN API on a free port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

from actors.mitigation.node import free_port
from tests.polling import eventually_sync


class WebhookReceiver:
    """An HTTP server that records every POST; the first `fail_first` answers are 500."""

    def __init__(self, fail_first: int = 0, port: int | None = None) -> None:
        self.fail_first = fail_first
        self.received: list[dict[str, Any]] = []
        self.raw: list[tuple[dict[str, str], bytes]] = []  # (lower-cased headers, exact body) per delivery
        self.attempts = 0
        self.port = port or free_port()
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def __aenter__(self) -> WebhookReceiver:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            headers = {}
            for line in head.decode().split("\r\n")[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.attempts += 1
            failing = self.attempts <= self.fail_first
            if not failing:
                self.received.append(json.loads(body))
                self.raw.append((headers, body))
            status = b"500 Internal Server Error" if failing else b"200 OK"
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
        finally:
            writer.close()

    def events(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.received if e["event"] == name]


@contextlib.contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Run an ASGI app with uvicorn on a free loopback port in a thread; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    eventually_sync(lambda: server.started, timeout=10, what="uvicorn started")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
