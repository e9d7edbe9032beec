"""Load tools of the mitigation bench: an asyncio raw HTTP/1.1 client bound to many 127.0.0.x source
addresses for floods, slowloris and connect floods (clean traffic is wrk, bench/wrk_load.py)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

REQUEST = b"GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench/1\r\n\r\n"


async def http_get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[int, bool]:
    """One keep-alive GET: (status, server closed the connection)."""
    writer.write(REQUEST)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length, close = 0, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
        elif name.lower() == b"connection" and b"close" in value.lower():
            close = True
    if length:
        await reader.readexactly(length)
    return status, close


@dataclass
class SourceStats:
    sent: int = 0
    ok: int = 0
    blocked: int = 0  # 4xx answer or refused/reset connection
    first_block: float | None = None
    after_block_sent: int = 0
    after_block_ok: int = 0
    latencies: list[float] = field(default_factory=list)

    def record(self, ok: bool, now: float, latency: float | None = None) -> None:
        self.sent += 1
        if self.first_block is not None:
            self.after_block_sent += 1
            self.after_block_ok += ok
        if ok:
            self.ok += 1
            if latency is not None:
                self.latencies.append(latency)
        else:
            self.blocked += 1
            if self.first_block is None:
                self.first_block = now


async def source_loop(
    host: str, port: int, source: str, stats: SourceStats, until: float, interval: float = 0.0
) -> None:
    """Requests from `source` until `until`: back-to-back (interval 0) or paced every `interval` seconds."""
    reader = writer = None
    next_at = time.monotonic()
    while time.monotonic() < until:
        if interval:
            next_at += interval
        started = time.monotonic()
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=(source, 0)), 3)
            assert reader is not None
            status, close = await asyncio.wait_for(http_get(reader, writer), 5)
            stats.record(status == 200, started, time.monotonic() - started)
            if close:
                writer.close()
                writer = None
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            stats.record(False, started)
            if writer is not None:
                writer.close()
            writer = None
            if not interval:
                await asyncio.sleep(0.01)
        if interval:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    if writer is not None:
        writer.close()


async def slowloris_socket(host: str, port: int, source: str, until: float, counters: dict[str, int]) -> None:
    """Hold a connection open sending one header line a second, reconnecting when the node cuts it."""
    while time.monotonic() < until:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=(source, 0)), 3)
            counters["opened"] += 1
            writer.write(b"GET / HTTP/1.1\r\nHost: bench\r\n")
            while time.monotonic() < until:
                await asyncio.sleep(1.0)
                writer.write(b"X-Slow: 1\r\n")
                await writer.drain()
                if writer.is_closing():
                    break
        except (TimeoutError, OSError):
            counters["cut"] += 1
            await asyncio.sleep(0.2)
        else:
            writer.close()


async def connect_loop(host: str, port: int, source: str, until: float, stats: SourceStats) -> None:
    """Open a connection, send one request, count it served if the origin answers; repeat (syn mode)."""
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=(source, 0)), 3)
            try:
                status, _ = await asyncio.wait_for(http_get(reader, writer), 3)
                stats.record(status == 200, started)
            finally:
                writer.close()
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            stats.record(False, started)
