"""One HAProxy master-worker process owned by its node: start, runtime API, hitless reload, stop.

The master is a child of the node's process and gets SIGTERM when that process dies
(PR_SET_PDEATHSIG), so a killed actor never leaves an HAProxy behind.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import signal
import subprocess
from pathlib import Path

from actors.mitigation.haproxy_config import NodePaths

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
_PR_SET_PDEATHSIG = 1


class HAProxyError(RuntimeError):
    pass


def _die_with_parent() -> None:  # runs in the child between fork and exec
    # a signal mask inherited from the parent's thread (event-loop threads block some) would make
    # HAProxy deaf to SIGTERM and SIGUSR2
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


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
            chunks = []
            while chunk := await reader.read(65536):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
        finally:
            writer.close()


class HAProxyProcess:
    def __init__(self, paths: NodePaths) -> None:
        self.paths = paths
        self._proc: subprocess.Popen[bytes] | None = None
        self.log_file = paths.root / "haproxy.out"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    async def start(self) -> None:
        check_config(self.paths.config)
        out = open(self.log_file, "ab")
        try:
            self._proc = subprocess.Popen(
                [HAPROXY, "-W", "-db", "-S", f"{self.paths.master_socket},mode,600", "-f", str(self.paths.config)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
                start_new_session=True,
            )
        finally:
            out.close()
        for _ in range(100):
            if self._proc.poll() is not None:
                raise HAProxyError(f"haproxy exited at start: {self.tail()}")
            if self.paths.admin_socket.exists():
                try:
                    await self.command("show info")
                    return
                except OSError:
                    pass
            await asyncio.sleep(0.05)
        raise HAProxyError(f"haproxy did not open its admin socket: {self.tail()}")

    def tail(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-1500:]
        except OSError:
            return ""

    async def command(self, command: str, payload: str | None = None) -> str:
        return await socket_command(self.paths.admin_socket, command, payload)

    async def reload(self) -> None:
        """Hitless reload through the master socket: new workers take over, old ones finish their requests."""
        check_config(self.paths.config)
        await socket_command(self.paths.master_socket, "reload")
        for _ in range(100):
            await asyncio.sleep(0.05)
            try:
                await self.command("show info")
                return
            except OSError:
                continue
        raise HAProxyError(f"haproxy did not come back after reload: {self.tail()}")

    def process_ids(self) -> list[int]:
        """The master and its workers (for CPU and memory figures)."""
        if not self.running or self._proc is None:
            return []
        master = self._proc.pid
        pids = [master]
        try:
            children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        except OSError:
            children = []
        return pids + [int(p) for p in children]

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        shutil.rmtree(self.paths.root, ignore_errors=True)
