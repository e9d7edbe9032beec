"""rayfleet.ssh: host addresses that cannot be used, names that do not resolve, and hosts that hang.

No DNS query leaves the machine: a bad label fails in IDNA encoding before any lookup, and the
unresolvable name is answered by the real libc resolver told to read numeric addresses only
(`AI_NUMERICHOST`), put in the event loop's place; the hung host is a real listener on loopback.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from rayfleet.ssh import SSHHost, SSHPool
from tests import netguard
from tests.polling import eventually

LONG_LABEL = "a" * 64 + ".example.test"


def _host(host: str, port: int = 22, **overrides: Any) -> SSHHost:
    return SSHHost(host=host, port=port, password="not-used", host_key_checking=False, **overrides)


async def test_a_host_name_with_a_label_over_63_characters_is_a_command_error_not_an_exception():
    pool = SSHPool()
    result = await pool.run("r/a", _host(LONG_LABEL), ["hostname"], 10)
    assert result.rc == 255 and not result.ok
    assert not result.unreachable  # a wrong configuration, not a host that is down
    assert result.stderr.startswith(f"ssh: Could not resolve hostname {LONG_LABEL}: invalid host name")
    assert await pool.unanswered("r/a", _host(LONG_LABEL)) is None  # nothing answered, nothing hung: no raise
    await pool.close()


@pytest.fixture
async def numeric_only_resolver():
    """The running loop resolves through libc with AI_NUMERICHOST: a name is never looked up."""
    loop = asyncio.get_running_loop()
    asked: list[str] = []

    async def getaddrinfo(host: Any, port: Any, *, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0):
        asked.append(str(host))
        lookup = functools.partial(netguard._REAL, host, port, family, type, proto, flags | socket.AI_NUMERICHOST)
        return await loop.run_in_executor(None, lookup)

    loop.getaddrinfo = getaddrinfo  # type: ignore[method-assign]
    yield asked
    del loop.getaddrinfo


async def test_a_name_that_does_not_resolve_says_so_in_the_resolvers_words(numeric_only_resolver):
    pool = SSHPool()
    result = await pool.run("r/a", _host("pve1.invalid"), ["hostname"], 10)
    assert numeric_only_resolver == ["pve1.invalid"]
    assert result.rc == 255 and result.unreachable
    assert "Unknown error" not in result.stderr
    words = _gai_words(socket.EAI_NONAME)
    assert result.stderr == f"ssh: Could not resolve hostname pve1.invalid: {words}"
    await pool.close()


def _gai_words(code: int) -> str:
    """What libc says for a getaddrinfo code (asked with a numeric-only lookup that must fail)."""
    try:
        netguard._REAL("pve1.invalid", 22, flags=socket.AI_NUMERICHOST)
    except socket.gaierror as exc:
        assert exc.errno == code
        return str(exc.strerror)
    raise AssertionError("a numeric-only lookup of a name resolved")


@pytest.fixture
async def silent() -> AsyncIterator[tuple[int, list[asyncio.StreamWriter]]]:
    """A hung host: a listener on loopback that takes each TCP connection (counted) and never sends
    an SSH banner. Yields (port, the connections taken)."""
    taken: list[asyncio.StreamWriter] = []

    async def hung(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        taken.append(writer)

    server = await asyncio.start_server(hung, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1], taken
    for writer in taken:
        writer.close()
    server.close()


@pytest.fixture
async def pool() -> AsyncIterator[SSHPool]:
    pool = SSHPool()
    yield pool
    await pool.close()


async def test_a_hung_host_is_waited_for_once_then_answered_at_once_during_its_back_off(silent, pool):
    port, taken = silent
    host = _host("127.0.0.1", port, connect_timeout=0.5, unreachable_backoff=600)
    results = [await pool.run("r/a", host, ["hostname"], 10) for _ in range(3)]
    results += await asyncio.gather(*(pool.run("r/a", host, ["hostname"], 10) for _ in range(3)))
    assert len(taken) == 1
    assert all(r.unreachable and r.rc == 255 for r in results)
    assert results[0].stderr == f"ssh: connect to host 127.0.0.1 port {port}: Connection timed out"
    for later in results[1:]:
        assert later.stderr.startswith(results[0].stderr + " (not tried again for ")
    assert await pool.unanswered("r/a", host) is not None
    with pytest.raises(ConnectionError):
        await pool.put_bytes("r/a", host, b"x", "/tmp/x")
    assert len(taken) == 1


async def test_after_the_back_off_the_next_request_tries_the_host_again(silent, pool):
    port, taken = silent
    host = _host("127.0.0.1", port, connect_timeout=0.3, unreachable_backoff=0.2)

    async def tried_again() -> bool:
        result = await pool.run("r/a", host, ["hostname"], 10)
        assert result.unreachable
        return len(taken) >= 2

    await eventually(tried_again, what="a second connection after the back-off")


async def test_a_zero_back_off_tries_every_time(silent, pool):
    port, taken = silent
    host = _host("127.0.0.1", port, connect_timeout=0.3, unreachable_backoff=0)
    for _ in range(2):
        assert (await pool.run("r/a", host, ["hostname"], 10)).unreachable
    assert len(taken) == 2
