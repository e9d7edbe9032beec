"""pve-sim's SSH front: an asyncssh server executing command lines on the model.

Authentication is by public key (an authorized_keys file) and, optionally, by
password. Every command line is appended to ``<state>/commands.log`` so a test
can prove what did (or did not) reach the host. SFTP is served chrooted to the
model's filesystem root.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path

import asyncssh

from .cli import PROGRESS
from .host import Host, make_cluster, make_host
from .nodestatus import set_hardware

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
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._owner.connections += 1
        self._conn = conn
        self._owner.open.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn is not None:
            self._owner.open.discard(self._conn)

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


TERMINATING = ("TERM", "KILL", "INT", "HUP")
SIGNAL_POLL = 0.05


async def _signal(process: asyncssh.SSHServerProcess[str]) -> str:
    """The first terminating signal the client sends on the channel (RFC 4254 6.9)."""
    while True:
        try:
            data = await process.stdin.read(65536)
        except asyncssh.SignalReceived as sig:
            if sig.signal in TERMINATING:
                return sig.signal
            continue
        except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged):
            continue
        if not data:  # stdin is at EOF: a signal can still arrive; it is queued for the next read
            await asyncio.sleep(SIGNAL_POLL)


class SimServer:
    """A running pve-sim instance."""

    def __init__(self, host: Host, state_dir: Path) -> None:
        self.host = host
        self.state_dir = state_dir
        self.server: asyncssh.SSHAcceptor | None = None
        self.port = 0
        self.connections = 0
        self.killed = 0
        self.open: set[asyncssh.SSHServerConnection] = set()
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
        token = PROGRESS.set(process.stderr.write)
        try:
            running = asyncio.ensure_future(self.host.execute(command, stdin))
        finally:
            PROGRESS.reset(token)
        signalled = asyncio.ensure_future(_signal(process))
        try:
            await asyncio.wait({running, signalled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            signalled.cancel()
        if not running.done():
            # sshd hands the signal to the command (`timeout` passes it on to its child): it dies
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
            self.killed += 1
            process.exit_with_signal(signalled.result())
            return
        try:
            result = running.result()
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
        if self.host.model.cluster is not None:
            self.host.model.cluster.ssh_down.discard(self.host.model.node)
        return self.port

    def close(self) -> None:
        if self.server is not None:
            self.server.close()

    async def stop_ssh(self) -> None:
        """sshd dies: no new connections, the open ones dropped (the node itself may still run)."""
        if self.host.model.cluster is not None:
            self.host.model.cluster.ssh_down.add(self.host.model.node)
        self.close()
        if self.server is not None:
            await self.server.wait_closed()
        for conn in list(self.open):
            conn.abort()

    async def power_off(self) -> None:
        """The node goes down: its SSH server as in `stop_ssh`, and the cluster's other members
        see it offline (as corosync would)."""
        await self.stop_ssh()
        if self.host.model.cluster is not None:
            self.host.model.cluster.offline.add(self.host.model.node)


class ThreadedSim:
    """pve-sim on its own event loop in a daemon thread (tests, benchmarks).

    One node by default (`node`); with `nodes` a cluster of them sharing one cluster
    state, each node its own SSH server on its own port (`ports`) with its own host key.
    `hardware` sets nodes' CPUs and memory (MB) by node name (the others keep theirs).
    """

    def __init__(
        self,
        state_dir: str | Path,
        authorized_keys: str | Path,
        host_key: str | Path | None = None,
        password: str | None = None,
        op_delay: float = 0.0,
        node: str = "pve",
        nodes: list[str] | None = None,
        hardware: dict[str, tuple[int, int]] | None = None,
    ) -> None:
        self.state_dir = Path(state_dir)
        if nodes:
            hosts = make_cluster(self.state_dir, nodes, op_delay=op_delay)
            self.sims = {h.model.node: SimServer(h, h.model.dir) for h in hosts}
            self.host_keys = {n: s.state_dir / "ssh_host_ed25519_key" for n, s in self.sims.items()}
        else:
            host = make_host(self.state_dir, node=node, op_delay=op_delay)
            self.sims = {host.model.node: SimServer(host, self.state_dir)}
            self.host_keys = {host.model.node: Path(host_key or self.state_dir / "ssh_host_ed25519_key")}
        for name, (cpus, memory_mb) in (hardware or {}).items():
            set_hardware(self.sims[name].host.model, cpus, memory_mb)
        self.sim = next(iter(self.sims.values()))
        self.host = self.sim.host
        self.host_key = next(iter(self.host_keys.values()))
        self._authorized_keys = authorized_keys
        self._password = password
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="pve-sim")
        self.port = 0
        self.ports: dict[str, int] = {}

    def start(self) -> int:
        self._thread.start()
        for name, sim in self.sims.items():
            fut = asyncio.run_coroutine_threadsafe(
                sim.start("127.0.0.1", 0, self.host_keys[name], self._authorized_keys, self._password), self.loop
            )
            self.ports[name] = fut.result(15)
        self.port = next(iter(self.ports.values()))
        return self.port

    def power_off(self, node: str, ssh_only: bool = False) -> None:
        """Take one node of the cluster down (`SimServer.power_off`), or only its SSH server."""
        sim = self.sims[node]
        asyncio.run_coroutine_threadsafe(sim.stop_ssh() if ssh_only else sim.power_off(), self.loop).result(5)

    def power_on(self, node: str) -> None:
        """The node is back: its SSH server listens on its port again and the cluster sees it online."""
        sim = self.sims[node]
        started = sim.start("127.0.0.1", self.ports[node], self.host_keys[node], self._authorized_keys, self._password)
        asyncio.run_coroutine_threadsafe(started, self.loop).result(15)
        if sim.host.model.cluster is not None:
            sim.host.model.cluster.offline.discard(node)

    def add_shared_storage(self, name: str) -> str:
        """A storage every node of the cluster shares (`ClusterDoc.add_shared_storage`): its mount point."""
        cluster = self.host.model.cluster
        if cluster is None:
            raise ValueError("a shared storage needs a cluster (nodes=...)")
        return cluster.add_shared_storage(name)

    def commands(self, node: str | None = None) -> list[str]:
        """Command lines received (by one node, or by every node, node after node)."""
        lines: list[str] = []
        for name, sim in self.sims.items():
            path = sim.state_dir / "commands.log"
            if (node is None or node == name) and path.exists():
                lines += path.read_text().splitlines()
        return lines

    def stop(self) -> None:
        async def _close() -> None:
            for sim in self.sims.values():
                sim.close()
                if sim.server is not None:
                    await sim.server.wait_closed()

        try:
            asyncio.run_coroutine_threadsafe(_close(), self.loop).result(5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
