"""Incremental Server-Sent Events parsing, split on event boundaries (blank lines)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SSEEvent:
    """One event: its ``event:`` name (may be empty), joined ``data:`` lines and raw bytes."""

    event: str
    data: str
    raw: bytes


class SSEParser:
    """Feed bytes as they arrive; get whole events back.

    Accepts ``\\n``, ``\\r\\n`` and ``\\r`` line endings. Comment lines (``:``) are kept in
    ``raw`` but produce no event by themselves. A partial event stays buffered.
    """

    def __init__(self, max_buffer: int = 4 * 1024 * 1024) -> None:
        self._buf = b""
        self._max = max_buffer

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buf += chunk
        if b"\r" in self._buf:
            self._buf = self._buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events: list[SSEEvent] = []
        while True:
            idx = self._buf.find(b"\n\n")
            if idx < 0:
                break
            block, self._buf = self._buf[:idx], self._buf[idx + 2 :]
            event = _parse_block(block)
            if event is not None:
                events.append(event)
        if len(self._buf) > self._max:
            raise ValueError("SSE event exceeds the buffer limit")
        return events

    def flush(self) -> list[SSEEvent]:
        """Whatever complete-looking event is left when the stream ends."""
        block, self._buf = self._buf.strip(b"\n"), b""
        if not block:
            return []
        event = _parse_block(block)
        return [event] if event is not None else []


def _parse_block(block: bytes) -> SSEEvent | None:
    name = ""
    data: list[str] = []
    for line in block.split(b"\n"):
        if not line or line.startswith(b":"):
            continue
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value.decode("utf-8", errors="replace"))
        elif field == b"event":
            name = value.decode("utf-8", errors="replace")
    if not data and not name:
        return None
    return SSEEvent(event=name, data="\n".join(data), raw=block + b"\n\n")


def encode_data(payload: str | bytes) -> bytes:
    if isinstance(payload, str):
        payload = payload.encode()
    return b"data: " + payload + b"\n\n"


DONE = b"data: [DONE]\n\n"
