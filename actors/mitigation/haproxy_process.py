"""One HAProxy master-worker process owned by its node: start, runtime API, hitless reload, stop.

The process is a `rayfleet.supervisor.Supervised` child: when the master exits (or is killed,
workers and all) or its admin socket stops answering `show info`, the supervisor starts a new
one after a backoff, and the node's `on_restart` re-applies its current maps through the
runtime API. The master is a child of the node's process and gets SIGTERM when that process
dies (PR_SET_PDEATHSIG), so a killed actor never leaves an HAProxy behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

from actors.mitigation.haproxy_config import NodePaths
from rayfleet.supervisor import RestartPolicy, Supervised, SupervisedProcess, spawn_logged

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
# A CLI payload must fit HAProxy's buffer (tune.bufsize, 16 KiB): 2.6 drops a longer one without an
# error, so a map replaced with it was committed empty (seen with 1,000 bans).
PAYLOAD_BYTES = 8000


class HAProxyError(RuntimeError):
    pass


def check_config(path: Path) -> None:
    """Raise HAProxyError with HAProxy's own message when the file does not parse."""
    result = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, text=True, timeout=20)
    if result.returncode != 0:
        raise HAProxyError((result.stderr or result.stdout).strip()[-2000:])


async def socket_command(path: Path, command: str, payload: str | None = None, timeout: float = 5.0) -> str:
    """Send one command (optionally with a `<<` payload) to an HAProxy CLI socket; return its answer."""
    # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation that races a result
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_unix_connection(str(path))
        try:
            text = command if payload is None else f"{command} <<\n{payload.rstrip(chr(10))}\n"
            writer.write(text.encode() + b"\n")
            await writer.drain()
            writer.write_eof()  # the master CLI answers a one-shot client once its input ends
            chunks = []
            while chunk := await reader.read(65536):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
        finally:
            writer.close()


class HAProxyProcess(SupervisedProcess):
    """The node's HAProxy, owned by its supervisor (the only owner of the process)."""

    def __init__(
        self,
        paths: NodePaths,
        name: str = "haproxy",
        on_restart: Callable[[], Awaitable[None]] | None = None,
        policy: RestartPolicy | None = None,
    ) -> None:
        self.paths = paths
        self.log_file = paths.root / "haproxy.out"
        self.supervised = Supervised(name, self._spawn, probe=self._probe, on_restart=on_restart, policy=policy)

    async def start(self) -> None:
        """Start HAProxy under its supervisor (a configuration HAProxy refuses is raised here)."""
        await self.supervised.start()

    async def _spawn(self) -> asyncio.subprocess.Process:
        await asyncio.to_thread(check_config, self.paths.config)
        proc = await spawn_logged(
            HAPROXY,
            *("-W", "-db", "-S", f"{self.paths.master_socket},mode,600", "-f", str(self.paths.config)),
            log=self.log_file,
        )
        try:
            await self._until_answering(proc)
        except BaseException:
            _kill_group(proc.pid)
            await proc.wait()
            raise
        return proc

    async def _until_answering(self, proc: asyncio.subprocess.Process) -> None:
        for _ in range(200):
            if proc.returncode is not None:
                raise HAProxyError(f"haproxy exited at start: {self.tail()}")
            try:  # the worker's admin socket, and the master's CLI (reloads, `worker_command`)
                await self.command("show info")
                if await self.current_worker() is not None:
                    return
            except OSError:  # no socket yet, or the dead predecessor's file
                pass
            await asyncio.sleep(0.05)
        raise HAProxyError(f"haproxy did not open its admin socket: {self.tail()}")

    async def _probe(self) -> bool:
        return "Pid:" in await self.command("show info", timeout=2.0)

    def tail(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-1500:]
        except OSError:
            return ""

    async def command(self, command: str, payload: str | None = None, timeout: float = 5.0) -> str:
        return await socket_command(self.paths.admin_socket, command, payload, timeout)

    async def replace_map(self, path: Path, lines: list[str]) -> None:
        """Make the map `path` hold exactly `lines` in one step (prepare, fill, commit a new version)."""
        answer = (await self.command(f"prepare map {path}")).strip()
        version = answer.rsplit(" ", 1)[-1]
        if not version.isdigit():
            raise HAProxyError(f"prepare map {path.name}: {answer[:200]}")
        await self.add_map(path, lines, f"@{version} ")
        refused = (await self.command(f"commit map @{version} {path}")).strip()
        if refused:
            raise HAProxyError(f"commit map {path.name}: {refused[:200]}")

    async def add_map(self, path: Path, lines: list[str], version: str = "") -> None:
        """Add `lines` (`key value`) to the map `path` (or to its `@<version> `), a few payloads of at
        most PAYLOAD_BYTES each; HAProxyError with its answer when it refuses one."""
        for chunk in payloads(lines):
            refused = (await self.command(f"add map {version}{path}", chunk)).strip()
            if refused:
                raise HAProxyError(f"add map {path.name}: {refused[:200]}")

    async def current_worker(self) -> int | None:
        """The pid of the current worker, from the master's `show proc` (None: no worker listed).

        During a reload the old worker can still answer the shared admin socket for a moment, so
        what must reach the new one goes through the master (`worker_command`)."""
        try:
            answer = await socket_command(self.paths.master_socket, "show proc", timeout=2.0)
        except (OSError, TimeoutError):
            return None
        return current_worker_pid(answer)

    async def worker_command(self, pid: int, command: str, timeout: float = 5.0) -> str:
        """`command` (`;`-joined commands allowed) run by the worker `pid`, through the master socket."""
        prefixed = "; ".join(f"@!{pid} {part.strip()}" for part in command.split(";"))
        return await socket_command(self.paths.master_socket, prefixed, timeout=timeout)

    async def reload(self) -> int:
        """Hitless reload through the master socket: new workers take over, old ones finish their
        requests. Returns the new worker's pid once it answers."""
        await asyncio.to_thread(check_config, self.paths.config)
        old = await self.current_worker()
        await socket_command(self.paths.master_socket, "reload")
        for _ in range(200):
            await asyncio.sleep(0.025)
            pid = await self.current_worker()
            if pid is None or pid == old:
                continue
            with contextlib.suppress(OSError, TimeoutError):
                if "Pid:" in await self.worker_command(pid, "show info", timeout=2.0):
                    return pid
        raise HAProxyError(f"haproxy did not come back after reload: {self.tail()}")

    async def stop(self) -> None:
        """Stop supervising, end HAProxy (SIGTERM, then SIGKILL) and remove the node's folder."""
        await self.supervised.stop()
        shutil.rmtree(self.paths.root, ignore_errors=True)

    def kill(self) -> None:
        """From a finaliser (no loop): end the process group at once."""
        pid = self.pid
        if pid is not None:
            _kill_group(pid, signal.SIGTERM)


def payloads(lines: list[str], limit: int = PAYLOAD_BYTES) -> list[str]:
    """`lines` joined into payloads of at most `limit` bytes each (a longer line goes alone)."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        if current and size + len(line) + 1 > limit:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        chunks.append("\n".join(current))
    return chunks


def current_worker_pid(show_proc: str) -> int | None:
    """The first pid under `# workers` in the master's `show proc` answer."""
    in_workers = False
    for line in show_proc.splitlines():
        if line.startswith("#"):
            in_workers = line.strip() == "# workers"
            continue
        first = line.split()[:1]
        if in_workers and first and first[0].isdigit():
            return int(first[0])
    return None


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
