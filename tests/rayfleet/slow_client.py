"""A slow or silent HTTP client on a raw socket, for the connection-limit tests."""

from __future__ import annotations

import asyncio
import contextlib


async def _received(reader: asyncio.StreamReader, chunks: list[bytes]) -> None:
    """Read into `chunks` until EOF or a reset: a server that closes with the client's later bytes still
    unread sends a reset, which must not lose the answer already received."""
    with contextlib.suppress(ConnectionError):
        while chunk := await reader.read(65536):
            chunks.append(chunk)


async def trickle(port: int, head: bytes, piece: bytes, every: float, give_up: float = 5.0) -> tuple[bytes, bool]:
    """Send `head`, then `piece` every `every` seconds (nothing if empty: a silent client) until
    the server closes the connection; returns what it answered and whether it closed (EOF or
    reset) within `give_up` seconds."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    chunks: list[bytes] = []
    answer = asyncio.ensure_future(_received(reader, chunks))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + give_up
    try:
        writer.write(head)
        while not answer.done() and loop.time() < deadline:
            if piece:
                with contextlib.suppress(ConnectionError):
                    writer.write(piece)
                    await writer.drain()
            await asyncio.wait([answer], timeout=every)
        return b"".join(chunks), answer.done()
    finally:
        answer.cancel()
        writer.close()
