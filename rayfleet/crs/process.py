"""The tier's nginx: a supervised child on a loopback port, reloaded in place when the policy changes.

nginx runs in the foreground (`daemon off`) with one worker, in its own process group and with
PR_SET_PDEATHSIG, so the owner's death ends it. A master killed outright leaves its worker
holding the port: every spawn first ends what is left of the previous group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable

from rayfleet.crs.config import CrsPaths, CrsPolicy, Upstream, write
from rayfleet.supervisor import RestartPolicy, Supervised, SupervisedProcess, children_of, spawn_logged

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
# how long a starting nginx may take to answer: it parses the whole Core Rule Set first (under a second
# on a quiet machine, over 10 s at a load average of 20), within the node's start budget
START_TIMEOUT_S = 60.0


class CrsError(RuntimeError):
    """nginx or ModSecurity refused the configuration (the message is theirs)."""


def check_config(paths: CrsPaths) -> None:
    """Raise CrsError with nginx's own message when the configuration (and the rules) do not load."""
    result = subprocess.run(
        [NGINX, "-t", "-q", "-p", str(paths.root), "-c", str(paths.nginx_conf), "-e", str(paths.error_log)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        raise CrsError((result.stderr or result.stdout).strip()[-2000:])


async def health(paths: CrsPaths, timeout: float = 2.0) -> bool:
    """True when nginx answers on its private health socket."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_unix_connection(str(paths.health_socket))
        try:
            writer.write(b"GET / HTTP/1.0\r\nHost: health\r\n\r\n")
            await writer.drain()
            return (await reader.readline()).startswith(b"HTTP/1.1 200")
        finally:
            writer.close()


class CrsTier(SupervisedProcess):
    """One nginx + ModSecurity + CRS process under `paths.root`, listening on `upstream.port`."""

    def __init__(
        self,
        paths: CrsPaths,
        policy: CrsPolicy,
        upstream: Upstream,
        name: str = "nginx-crs",
        on_restart: Callable[[], Awaitable[None]] | None = None,
        restart_policy: RestartPolicy | None = None,
    ) -> None:
        self.paths = paths
        self.policy = policy
        self.upstream = upstream
        self.out_file = paths.root / "nginx.out"
        self._group: int | None = None
        self.supervised = Supervised(name, self._spawn, probe=self._probe, on_restart=on_restart, policy=restart_policy)

    async def start(self) -> None:
        """Write the configuration and start nginx (a configuration it refuses raises CrsError)."""
        self.paths.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        write(self.policy, self.paths, self.upstream)
        await asyncio.to_thread(check_config, self.paths)
        await self.supervised.start()

    async def apply(self, policy: CrsPolicy, upstream: Upstream | None = None) -> None:
        """Take a new policy: checked first (a refused one leaves the running tier as it was), then
        a graceful reload; returns once only workers started with the new configuration remain."""
        before = (self.policy, self.upstream)
        self.policy, self.upstream = policy, upstream or self.upstream
        write(self.policy, self.paths, self.upstream)
        try:
            await asyncio.to_thread(check_config, self.paths)
        except CrsError:
            self.policy, self.upstream = before
            write(self.policy, self.paths, self.upstream)
            raise
        master = self.pid
        if master is None:  # being restarted: the new process reads the files just written
            return
        old = set(children_of(master))
        os.kill(master, signal.SIGHUP)
        for _ in range(400):
            await asyncio.sleep(0.025)
            now = set(children_of(master))
            if now and not now & old:
                return
        raise CrsError(f"nginx did not replace its workers after the reload: {self.tail()}")

    async def _spawn(self) -> asyncio.subprocess.Process:
        self._end_group()
        with contextlib.suppress(FileNotFoundError):
            self.paths.health_socket.unlink()  # a killed master leaves its socket file behind
        proc = await spawn_logged(
            NGINX,
            *("-p", str(self.paths.root), "-c", str(self.paths.nginx_conf), "-e", str(self.paths.error_log)),
            log=self.out_file,
        )
        self._group = proc.pid
        try:
            await self._until_answering(proc)
        except BaseException:
            self._end_group()
            await proc.wait()
            raise
        return proc

    async def _until_answering(self, proc: asyncio.subprocess.Process) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.returncode is not None:
                raise CrsError(f"nginx exited at start: {self.tail()}")
            with contextlib.suppress(OSError, TimeoutError):
                if await health(self.paths) and children_of(proc.pid):
                    return
            await asyncio.sleep(0.025)
        raise CrsError(f"nginx did not answer: {self.tail()}")

    async def _probe(self) -> bool:
        return await health(self.paths)

    def _end_group(self) -> None:
        if self._group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._group, signal.SIGKILL)

    def tail(self) -> str:
        text = ""
        for path in (self.out_file, self.paths.error_log):
            with contextlib.suppress(OSError):
                text += path.read_text(errors="replace")[-1000:]
        return text

    async def stop(self) -> None:
        """Stop supervising and end nginx, workers included."""
        await self.supervised.stop()
        self._end_group()

    def kill(self) -> None:
        """From a finaliser (no loop): end the process group at once."""
        self._end_group()
