"""The runtime API client: how a command and its payload reach the socket, and what comes back."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from actors.mitigation.haproxy_process import socket_command


def _socket_path() -> Path:
    return Path(tempfile.mkdtemp(prefix="rf-sock-")) / "admin.sock"


async def test_a_command_gets_the_whole_answer_until_haproxy_closes():
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert await reader.readline() == b"show info\n"
        writer.write(b"Name: HAProxy\n" * 10000)
        await writer.drain()
        writer.close()

    path = _socket_path()
    async with await asyncio.start_unix_server(handle, path=str(path)):
        answer = await socket_command(path, "show info")
    assert answer.count("Name: HAProxy") == 10000


async def test_a_payload_follows_the_command_after_a_heredoc_marker():
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.read(4096))
        writer.close()

    path = _socket_path()
    async with await asyncio.start_unix_server(handle, path=str(path)):
        await socket_command(path, "add map /x.map", "key1 v1\nkey2 v2\n\n")
    # trailing newlines of the payload collapse: one blank line ends the payload
    assert seen == [b"add map /x.map <<\nkey1 v1\nkey2 v2\n\n"]


async def test_a_silent_socket_times_out():
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    path = _socket_path()
    async with await asyncio.start_unix_server(handle, path=str(path)):
        with pytest.raises(TimeoutError):
            await socket_command(path, "show info", timeout=0.2)


async def test_no_socket_is_an_os_error():
    with pytest.raises(OSError):
        await socket_command(Path(tempfile.mkdtemp()) / "missing.sock", "show info")
