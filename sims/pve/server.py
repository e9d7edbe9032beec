"""pve-sim's SSH front: an asyncssh server executing command lines on the model.

Authentication is by public key (an authorized_keys file) and, optionally, by
password. Every command line is appended to ``<state>/commands.log`` so a test
can prove what did (or did not) reach the host. SFTP is served chrooted to the
model's filesystem root.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import asyncssh

from .host import Host, make_host

NEEDS_STDIN = ("chpasswd",)


def ensure_host_key(path: str | Path) -> asyncssh.SSHKey:
    path = Path(path)
    if path.exists():
        return asyncssh.read_private_key(str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_private_key(str(path))
    os.chmod(path, 0o600)
    key.write_public_key(str(path) + ".pub")
    return key


class _Server(asyncssh.SSHServer):
    def __init__(self, authorized_keys: str, password: str | None, owner: SimServer) -> None:
        self._authorized_keys = authorized_keys
        self._password = password
        self._owner = owner

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._owner.connections += 1

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return self._password is not None

    def validate_password(self, username: str, password: str) -> bool:
        import hmac

        return self._password is not None and hmac.compare_digest(password.encode(), self._password.encode())

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        try:
            keys = asyncssh.read_authorized_keys(self._authorized_keys)
        except (OSError, ValueError):
            return False
        return keys.validate(key, "127.0.0.1", "127.0.0.1") is not None


class SimServer:
    """A running pve-sim instance."""

    def __init__(self, host: Host, state_dir: Path) -> None:
        self.host = host
        self.state_dir = state_dir
        self.server: asyncssh.SSHAcceptor | None = None
        self.port = 0
        self.connections = 0
        self._log_path = state_dir / "commands.log"

    async def _process(self, process: asyncssh.SSHServerProcess[str]) -> None:
        command = process.command or ""
        with self._log_path.open("a") as fh:
            fh.write(command.replace("\n", "\\n") + "\n")
        stdin = b""
        if any(word in command.split() for word in NEEDS_STDIN):
            try:
                stdin = (await asyncio.wait_for(process.stdin.read(), 10)).encode()
            except (TimeoutError, asyncssh.Error):
                stdin = b""
        try:
            result = await self.host.execute(command, stdin)
        except Exception as exc:  # a simulator bug must still answer like a crashed tool
            process.stderr.write(f"pve-sim internal error: {type(exc).__name__}: {exc}\n")
            process.exit(255)
            return
        if result.stdout:
            process.stdout.write(result.stdout)
        if result.stderr:
            process.stderr.write(result.stderr)
        process.exit(result.rc)

    async def start(
        self, bind: str, port: int, host_key: str | Path, authorized_keys: str | Path, password: str | None = None
    ) -> int:
        key = ensure_host_key(host_key)
        fs_root = str(self.host.model.fs_root)
        self.server = await asyncssh.create_server(
            lambda: _Server(str(authorized_keys), password, self),
            bind,
            port,
            server_host_keys=[key],
            process_factory=self._process,
            sftp_factory=lambda chan: asyncssh.SFTPServer(chan, chroot=fs_root.encode()),
            allow_scp=False,
            encoding="utf-8",
            keepalive_interval=30,
        )
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


class ThreadedSim:
    """pve-sim on its own event loop in a daemon thread (tests, benchmarks)."""

    def __init__(
        self,
        state_dir: str | Path,
        authorized_keys: str | Path,
        host_key: str | Path | None = None,
        password: str | None = None,
        op_delay: float = 0.0,
        node: str = "pve",
    ) -> None:
        self.state_dir = Path(state_dir)
        self.host = make_host(self.state_dir, node=node, op_delay=op_delay)
        self.sim = SimServer(self.host, self.state_dir)
        self.host_key = Path(host_key or self.state_dir / "ssh_host_ed25519_key")
        self._authorized_keys = authorized_keys
        self._password = password
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="pve-sim")
        self.port = 0

    def start(self) -> int:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(
            self.sim.start("127.0.0.1", 0, self.host_key, self._authorized_keys, self._password), self.loop
        )
        self.port = fut.result(15)
        return self.port

    def commands(self) -> list[str]:
        path = self.state_dir / "commands.log"
        return path.read_text().splitlines() if path.exists() else []

    def stop(self) -> None:
        async def _close() -> None:
            self.sim.close()
            if self.sim.server is not None:
                await self.sim.server.wait_closed()

        try:
            asyncio.run_coroutine_threadsafe(_close(), self.loop).result(5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
