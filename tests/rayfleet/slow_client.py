"""A slow or silent HTTP client on a raw socket, for the connection-limit tests."""

from __future__ import annotations

import asyncio
import contextlib


async def trickle(port: int, head: bytes, piece: bytes, every: float, give_up: float = 5.0) -> tuple[bytes, bool]:
    """Send `head`, then `piece` every `every` seconds (nothing if empty: a silent client) until
    the server closes the connection; returns what it answered and whether it closed (EOF or
    reset) within `give_up` seconds."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answer = asyncio.ensure_future(reader.read(-1))
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
        if not answer.done():
            return b"", False
        try:
            return answer.result(), True
        except ConnectionError:  # reset: closed as well
            return b"", True
    finally:
        answer.cancel()
        writer.close()
