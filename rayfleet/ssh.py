"""Pooled SSH execution: one asyncssh connection per host, bounded sessions.

Shared by every component that drives hosts over SSH (the container API, the
autoscaler's monitors and health probe). A host is anything shaped like
`SSHTarget`: the `SSHHost` dataclass below, or a component's own pydantic
config with the same attributes.

Every argv is quoted word by word with `shlex.quote` and wrapped in the host's
`timeout` utility, so the remote command is killed when `api.command_timeout`
passes even if our side has gone away; the client gives up a little later and
reports 124. A command is re-sent only when the connection failed *before* the
channel opened (it never ran); a timeout is never retried.

A caller that gives up (its task is cancelled) stops the remote command: TERM is sent on the
channel (RFC 4254 6.9; `timeout` passes it to the command and kills it `KILL_GRACE` seconds
later if it is still there) and the cancellation goes on only once the channel has closed,
so whatever the caller holds (a container's lock) outlives the remote command.

A host whose connection timed out (it hangs: the TCP handshake or the SSH banner never comes) is
not tried again for `unreachable_backoff` seconds: meanwhile every request for it is answered at
once as unreachable, with the error that was seen; the first request after the back-off tries it
again. A refused connection answers at once and is tried every time.

A host name that cannot be an address (a label over 63 characters) and a name the resolver does not
know are connection errors like the others, worded as OpenSSH words them ("Could not resolve
hostname ..."), never an exception out of the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shlex
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import asyncssh

KILL_GRACE = 5
CLIENT_GRACE = 10

OutputSink = Callable[[str], None]
"""Called with each line of the command's output (stdout and stderr) as it arrives."""


class SSHTarget(Protocol):
    """What the pool reads from a host description."""

    @property
    def host(self) -> str: ...
    @property
    def user(self) -> str: ...
    @property
    def key_file(self) -> str | None: ...
    @property
    def known_hosts(self) -> str | None: ...
    @property
    def host_key_checking(self) -> bool: ...
    @property
    def max_sessions(self) -> int: ...
    @property
    def connect_timeout(self) -> float: ...
    @property
    def unreachable_backoff(self) -> float: ...

    def effective_port(self) -> int: ...

    def effective_password(self) -> str | None: ...


@dataclass(frozen=True)
class SSHHost:
    """A host reached over SSH (key or password; host key pinned in `known_hosts`)."""

    host: str
    port: int = 22
    user: str = "root"
    key_file: str | None = None
    password: str | None = field(default=None, repr=False)
    known_hosts: str | None = None
    host_key_checking: bool = True
    max_sessions: int = 8
    connect_timeout: float = 15.0
    unreachable_backoff: float = 30.0

    def effective_port(self) -> int:
        return self.port

    def effective_password(self) -> str | None:
        return self.password


class Resting(OSError):
    """The host's connection timed out less than `unreachable_backoff` seconds ago: not tried now.
    Its text is that connection error and how long the host rests."""


class Unanswered(ConnectionError):
    """A file transfer's host did not answer (connection refused or timed out): nothing was sent.
    Its text is the connection error, worded as for a command."""


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    stdout: str
    stderr: str
    rc: int
    timed_out: bool = False
    unreachable: bool = False
    """The host did not answer (connection refused or timed out, network unreachable): the
    command never ran, so it may be sent to another host."""

    @property
    def ok(self) -> bool:
        return self.rc == 0


def command_line(argv: Sequence[str], timeout: float | None) -> str:
    """The remote command line: every word quoted; `timeout -k` in front."""
    quoted = " ".join(shlex.quote(word) for word in argv)
    if timeout is None:
        return quoted
    seconds = max(1, round(timeout))
    return f"timeout -k {KILL_GRACE} {seconds} {quoted}"


_CONNECT_ERRORS = (TimeoutError, OSError, asyncssh.Error, ValueError)
"""What opening a connection raises when it fails; ValueError: a host name that cannot be an
address (UnicodeError from its IDNA encoding: a label over 63 characters) or another option the
client refuses."""


class _HostConnection:
    def __init__(self, key: str, zone: SSHTarget) -> None:
        self.key = key
        self.zone = zone
        self.conn: asyncssh.SSHClientConnection | None = None
        self.lock = asyncio.Lock()
        self.sessions = asyncio.Semaphore(zone.max_sessions)
        self.facts: dict[str, str] = {}
        self.resting_until = 0.0
        self.resting_error = ""

    def _options(self) -> dict[str, Any]:
        zone = self.zone
        opts: dict[str, Any] = {
            "username": zone.user,
            "port": zone.effective_port(),
            "connect_timeout": zone.connect_timeout,
            "keepalive_interval": 15,
            "known_hosts": zone.known_hosts if zone.host_key_checking else None,
            "client_keys": [zone.key_file] if zone.key_file else None,
            "agent_path": None,
        }
        password = zone.effective_password()
        if password is not None:
            opts["password"] = password
        if not zone.key_file:
            opts["client_keys"] = None
            opts["preferred_auth"] = "password,keyboard-interactive"
        return opts

    async def get(self) -> asyncssh.SSHClientConnection:
        async with self.lock:
            if self.conn is not None and not self.conn.is_closed():
                return self.conn
            now = asyncio.get_running_loop().time()
            if now < self.resting_until:
                rest = math.ceil(self.resting_until - now)
                raise Resting(f"{self.resting_error} (not tried again for {rest} s: unreachable_backoff)")
            try:
                self.conn = await asyncssh.connect(self.zone.host, **self._options())
            except TimeoutError as exc:
                if self.zone.unreachable_backoff > 0:
                    self.resting_until = asyncio.get_running_loop().time() + self.zone.unreachable_backoff
                    self.resting_error = _connect_error(self.zone, exc)
                raise
            self.resting_until = 0.0
            return self.conn

    async def drop(self, conn: asyncssh.SSHClientConnection | None) -> None:
        async with self.lock:
            if conn is not None and self.conn is conn:
                self.conn = None
        if conn is not None:
            conn.close()


class SSHPool:
    """Connections keyed by `region/az`; safe to share between requests."""

    def __init__(self) -> None:
        self._hosts: dict[str, _HostConnection] = {}

    def _host(self, key: str, zone: SSHTarget) -> _HostConnection:
        host = self._hosts.get(key)
        if host is None or host.zone is not zone:
            host = _HostConnection(key, zone)
            self._hosts[key] = host
        return host

    async def run(
        self,
        key: str,
        zone: SSHTarget,
        argv: Sequence[str],
        timeout: float | None,
        stdin: str | None = None,
        on_output: OutputSink | None = None,
    ) -> CommandResult:
        host = self._host(key, zone)
        line = command_line(argv, timeout)
        async with host.sessions:
            for attempt in (1, 2):
                try:
                    conn = await host.get()
                except _CONNECT_ERRORS as exc:
                    return CommandResult(tuple(argv), "", _connect_error(zone, exc), 255, unreachable=_unanswered(exc))
                try:
                    process = await conn.create_process(line, encoding="utf-8", errors="replace")
                except (
                    asyncssh.ChannelOpenError,
                    asyncssh.ConnectionLost,
                    asyncssh.DisconnectError,
                    BrokenPipeError,
                    ConnectionResetError,
                ) as exc:
                    await host.drop(conn)
                    if attempt == 2:
                        return CommandResult(tuple(argv), "", f"ssh: {zone.host}: {exc}", 255)
                    continue
                return await self._finish(process, argv, timeout, stdin, host, conn, on_output)
        raise AssertionError("unreachable")

    async def _finish(
        self,
        process: asyncssh.SSHClientProcess[str],
        argv: Sequence[str],
        timeout: float | None,
        stdin: str | None,
        host: _HostConnection,
        conn: asyncssh.SSHClientConnection,
        on_output: OutputSink | None = None,
    ) -> CommandResult:
        limit = None if timeout is None else timeout + CLIENT_GRACE
        try:
            talk = process.communicate(stdin or "") if on_output is None else _streamed(process, stdin, on_output)
            stdout, stderr = await asyncio.wait_for(talk, limit)
        except asyncio.CancelledError:
            await _stopped(process)
            raise
        except TimeoutError:
            process.close()
            return CommandResult(tuple(argv), "", f"Command execution timed out after {timeout:g} seconds.", 124, True)
        except (asyncssh.ConnectionLost, asyncssh.DisconnectError, BrokenPipeError, ConnectionResetError) as exc:
            await host.drop(conn)
            return CommandResult(tuple(argv), "", f"ssh: connection lost while running the command: {exc}", 255)
        rc = process.exit_status
        if rc is None:
            rc = 255
        if rc == 124 and timeout is not None:
            return CommandResult(
                tuple(argv), stdout or "", f"Command execution timed out after {timeout:g} seconds.", 124, True
            )
        return CommandResult(tuple(argv), stdout or "", stderr or "", rc)

    async def unanswered(self, key: str, zone: SSHTarget) -> str | None:
        """Open (or reuse) the host's pooled connection: the error when the host did not answer
        (refused, timed out), else None (a refused key or host key is an answer)."""
        try:
            await self._host(key, zone).get()
        except _CONNECT_ERRORS as exc:
            return _connect_error(zone, exc) if _unanswered(exc) else None
        return None

    async def _connected(self, host: _HostConnection) -> asyncssh.SSHClientConnection:
        """The pooled connection for a file transfer; `Unanswered` when the host did not answer,
        `ConnectionError` (worded) when its address cannot be used."""
        try:
            return await host.get()
        except _CONNECT_ERRORS as exc:
            if _unanswered(exc):
                raise Unanswered(_connect_error(host.zone, exc)) from None
            if isinstance(exc, ValueError):  # an address that cannot be one: an OSError as its callers expect
                raise ConnectionError(_connect_error(host.zone, exc)) from None
            raise

    async def put_bytes(self, key: str, zone: SSHTarget, data: bytes, remote_path: str) -> None:
        """Write `data` to `remote_path` on the host over SFTP (same pooled connection)."""
        host = self._host(key, zone)
        async with host.sessions:
            conn = await self._connected(host)
            async with conn.start_sftp_client() as sftp, sftp.open(remote_path, "wb") as fh:
                await fh.write(data)

    async def put_file(self, key: str, zone: SSHTarget, local_path: str, remote_path: str) -> None:
        host = self._host(key, zone)
        async with host.sessions:
            conn = await self._connected(host)
            async with conn.start_sftp_client() as sftp:
                await sftp.put(local_path, remote_path)

    async def get_file(self, key: str, zone: SSHTarget, remote_path: str, local_path: str) -> None:
        host = self._host(key, zone)
        async with host.sessions:
            conn = await self._connected(host)
            async with conn.start_sftp_client() as sftp:
                await sftp.get(remote_path, local_path)

    async def fact(self, key: str, zone: SSHTarget, name: str, argv: Sequence[str], timeout: float) -> CommandResult:
        """A cached single-line answer about a host (its node name)."""
        host = self._host(key, zone)
        if name in host.facts:
            return CommandResult(tuple(argv), host.facts[name], "", 0)
        result = await self.run(key, zone, argv, timeout)
        if result.ok and result.stdout.strip():
            host.facts[name] = result.stdout.strip()
            return CommandResult(tuple(argv), host.facts[name], "", 0)
        return result

    async def close(self) -> None:
        for host in self._hosts.values():
            await host.drop(host.conn)
        self._hosts.clear()


async def _streamed(
    process: asyncssh.SSHClientProcess[str], stdin: str | None, on_output: OutputSink
) -> tuple[str, str]:
    """Like `communicate`, handing each output line to `on_output` as it arrives."""
    if stdin:
        process.stdin.write(stdin)
    process.stdin.write_eof()

    async def pump(stream: asyncssh.SSHReader[str], into: list[str]) -> None:
        async for line in stream:
            into.append(line)
            on_output(line.rstrip("\n"))

    out: list[str] = []
    err: list[str] = []
    await asyncio.gather(pump(process.stdout, out), pump(process.stderr, err))
    await process.wait_closed()
    return "".join(out), "".join(err)


async def _stopped(process: asyncssh.SSHClientProcess[str]) -> None:
    """TERM the remote command and wait for its channel to close (bounded: `timeout -k` kills it
    `KILL_GRACE` s after TERM); a further cancellation does not cut the wait short."""
    with contextlib.suppress(OSError, asyncssh.Error):
        process.send_signal("TERM")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + KILL_GRACE + CLIENT_GRACE
    while loop.time() < deadline:
        try:
            await asyncio.wait_for(process.wait_closed(), deadline - loop.time())
            return
        except asyncio.CancelledError:
            continue
        except (TimeoutError, OSError, asyncssh.Error):
            break
    process.close()


def _unanswered(exc: BaseException) -> bool:
    """The connection failed before any authentication: nothing answered (a refused key or host
    key is an answer, and a wrong configuration, not a host that is down)."""
    return isinstance(exc, TimeoutError | OSError | asyncssh.ConnectionLost)


def _connect_error(zone: SSHTarget, exc: BaseException) -> str:
    if isinstance(exc, Resting):
        return str(exc)
    if isinstance(exc, UnicodeError):
        why = "a label is empty or longer than 63 characters, or not valid IDNA"
        return f"ssh: Could not resolve hostname {zone.host[:255]}: invalid host name ({why})"
    if isinstance(exc, socket.gaierror):  # its errno is a negative EAI_* code, not for os.strerror
        return f"ssh: Could not resolve hostname {zone.host[:255]}: {exc.strerror or exc}"
    if isinstance(exc, ValueError):
        return f"ssh: {zone.user}@{zone.host[:255]} port {zone.effective_port()}: {exc}"
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return f"ssh: Host key verification failed for {zone.host}:{zone.effective_port()}: {exc}"
    if isinstance(exc, asyncssh.PermissionDenied):
        return f"ssh: {zone.user}@{zone.host}: Permission denied: {exc}"
    if isinstance(exc, asyncio.TimeoutError):
        return f"ssh: connect to host {zone.host} port {zone.effective_port()}: Connection timed out"
    if isinstance(exc, OSError) and exc.errno:  # as OpenSSH words it: "Connection refused"
        return f"ssh: connect to host {zone.host} port {zone.effective_port()}: {os.strerror(exc.errno)}"
    return f"ssh: connect to host {zone.host} port {zone.effective_port()}: {exc}"
