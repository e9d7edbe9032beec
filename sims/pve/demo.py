"""The demo host of `make up`: one pve-sim process with keys under ``var/lxc-sim/``.

No actor owns the demo simulator: `rayfleet up` starts it (the component's prestart
hook) before Ray. That process supervises it with `rayfleet.supervisor` (an SSH-banner
health probe, restart with backoff) and publishes the supervisor's status every second
in ``<folder>/children.json``, which the component's health body and ``/metrics`` read
(`published_children`). The model lives on disk, so a restarted simulator has the same
containers.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import asyncssh

from rayfleet.supervisor import Child, RestartPolicy, Supervised, SupervisorThread

from .server import ensure_host_key

DEFAULT_PORT = 2222
PROJECT_ROOT = Path(__file__).resolve().parents[2]
FILES = {
    "host_key": "ssh_host_ed25519_key",
    "client_key": "client_key",
    "authorized": "authorized_keys",
    "known_hosts": "known_hosts",
    "pid": "sim.pid",
    "log": "sim.log",
    "children": "children.json",
}
START_TIMEOUT = 20.0
PUBLISH_INTERVAL = 1.0
STALE_AFTER = 10.0
_supervisor: SupervisorThread | None = None
_publishers: dict[str, asyncio.Task[None]] = {}


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return b"sims.pve" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def _client_key(path: Path) -> None:
    if path.exists():
        return
    key = asyncssh.generate_private_key("ssh-ed25519", comment="rayfleet-lxc-demo")
    key.write_private_key(str(path))
    os.chmod(path, 0o600)
    key.write_public_key(str(path) + ".pub")


class DemoHost(TypedDict):
    """How to reach a demo simulator (what `ensure_demo_host` returns)."""

    host: str
    port: int
    user: str
    key_file: str
    known_hosts: str
    state_dir: str
    log: str
    pid: int | None
    started: bool


@dataclass(frozen=True)
class _Names:
    """Where one demo host keeps its files, and the variables that publish it."""

    base: Path
    port_env: str
    dir_env: str

    def file(self, name: str) -> Path:
        return self.base / FILES[name]

    def publish(self, port: int, public_key: str) -> None:
        _publish(self.base, port, public_key, self.file("known_hosts"), self.port_env, self.dir_env)


def ensure_demo_host(
    var_dir: str | os.PathLike[str],
    *,
    name: str = "lxc-sim",
    port_env: str = "LXC_SIM_PORT",
    dir_env: str = "LXC_SIM_DIR",
    default_port: int = DEFAULT_PORT,
    node: str = "pve",
) -> DemoHost:
    """Start (once) the demo pve-sim and return how to reach it.

    Keys, known_hosts, the model and the log live in ``<var_dir>/lxc-sim/``.
    The port is ``$LXC_SIM_PORT``, else 2222 (or a free port when 2222 belongs to
    another process). Calling it again while the simulator runs returns the same
    description with ``started: False``. It exports ``LXC_SIM_PORT`` and
    ``LXC_SIM_DIR`` so the Ray cluster started afterwards by this process (and
    the demo config's ``${LXC_SIM_DIR}`` paths) find it. The simulator exits with
    the process that started it, which supervises it: restarted (same port, same
    model) when it dies or stops answering, its status in ``children.json``.
    """
    names = _Names(Path(var_dir) / name, port_env, dir_env)
    names.base.mkdir(parents=True, exist_ok=True)
    explicit = os.environ.get(port_env)
    port = int(explicit) if explicit else default_port
    public = _prepare_keys(names)
    info = DemoHost(
        host="127.0.0.1",
        port=port,
        user="root",
        key_file=str(names.file("client_key")),
        known_hosts=str(names.file("known_hosts")),
        state_dir=str(names.base / "state"),
        log=str(names.file("log")),
        pid=None,
        started=False,
    )
    running = _running(names, port)
    if running is not None:
        info["pid"], info["port"] = running
        names.publish(running[1], public)
        return info
    if _port_open(port):
        if explicit:
            raise RuntimeError(f"{port_env} {port} is taken by another process; choose a free port")
        port = _free_port()
        info["port"] = port
    pid = _supervise(names, port, node)
    names.publish(port, public)
    info["pid"], info["started"] = pid, True
    return info


def _prepare_keys(names: _Names) -> str:
    """The host key (made when missing), the client key authorized; returns the host's public key."""
    host_key = ensure_host_key(names.file("host_key"))
    _client_key(names.file("client_key"))
    names.file("authorized").write_text(Path(str(names.file("client_key")) + ".pub").read_text())
    return host_key.export_public_key("openssh").decode().strip()


def _running(names: _Names, port: int) -> tuple[int, int] | None:
    """(pid, port) of the simulator a previous call started: supervised by this process
    (even while it restarts), or still running and listening."""
    if not names.file("pid").exists():
        return None
    here = _supervisor.children.get(child_name(names.base.name)) if _supervisor is not None else None
    if here is not None:
        recorded = names.file("pid").read_text().strip().partition(":")[2]
        return here.status()["pid"] or 0, int(recorded or port)
    try:
        pid, _, recorded = names.file("pid").read_text().strip().partition(":")
        pid_num, recorded_port = int(pid), int(recorded or port)
    except ValueError:
        pid_num, recorded_port = 0, port
    if pid_num and _alive(pid_num) and _port_open(recorded_port):
        return pid_num, recorded_port
    return None


def _argv(names: _Names, port: int, node: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sims.pve",
        "--port",
        str(port),
        "--state",
        str(names.base / "state"),
        "--authorized-keys",
        str(names.file("authorized")),
        "--host-key",
        str(names.file("host_key")),
        "--exit-with-parent",
        str(os.getpid()),
        "--node",
        node,
    ]


async def _start_sim(names: _Names, port: int, node: str) -> Child:
    """Start ``python -m sims.pve`` on `port` and wait until it listens (the supervisor's spawn)."""
    with open(names.file("log"), "ab") as log:
        proc = await asyncio.create_subprocess_exec(
            *_argv(names, port, node),
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
            cwd=str(PROJECT_ROOT),
            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.returncode is not None:
            raise RuntimeError(f"pve-sim exited with {proc.returncode}; see {names.file('log')}")
        if await ssh_banner(port):
            names.file("pid").write_text(f"{proc.pid}:{port}")
            return proc
        await asyncio.sleep(0.1)
    proc.kill()
    await proc.wait()
    raise RuntimeError(f"pve-sim did not listen on port {port} within {START_TIMEOUT:.0f} s; see {names.file('log')}")


async def ssh_banner(port: int, host: str = "127.0.0.1", timeout: float = 2.0) -> bool:
    """The health probe: the port answers with an SSH identification line."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, TimeoutError):
        return False
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
        return line.startswith(b"SSH-2.0-")
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()


def _supervisor_thread() -> SupervisorThread:
    """This process's supervisor of demo hosts (one loop thread, made on first use)."""
    global _supervisor
    if _supervisor is None:
        _supervisor = SupervisorThread("pve-sim")
    return _supervisor


def _supervise(names: _Names, port: int, node: str) -> int:
    """Start the simulator under supervision and publish its status; returns its pid."""
    thread = _supervisor_thread()
    child = Supervised(
        child_name(names.base.name),
        lambda: _start_sim(names, port, node),
        probe=lambda: ssh_banner(port),
        policy=RestartPolicy(initial_backoff=0.5, probe_interval=2.0, probe_failures=3),
    )
    thread.start(child)
    thread.run(_begin_publishing(child, names.file("children")))
    assert child.child is not None
    return child.child.pid


def child_name(folder: str) -> str:
    """The supervised child's name for a demo host's folder (``pve-sim/lxc-sim``)."""
    return f"pve-sim/{folder}"


async def _begin_publishing(child: Supervised, path: Path) -> None:
    _publishers[child.name] = asyncio.create_task(_publish_loop(child, path), name=f"publish-{child.name}")


async def _publish_loop(child: Supervised, path: Path) -> None:
    """Write the child's status to `path` every second until it is stopped (then once more)."""
    while True:
        status: dict[str, Any] = dict(child.status())
        document = {"supervisor_pid": os.getpid(), "published_at": time.time(), "children": [status]}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(document))
        tmp.replace(path)
        if status["state"] == "stopped":
            return
        await asyncio.sleep(PUBLISH_INTERVAL)


def published_children(path: str | os.PathLike[str], now: float | None = None) -> list[dict[str, Any]]:
    """The statuses a demo host's supervisor published at `path` (none when there is no file).
    A file not refreshed for ``STALE_AFTER`` seconds means its supervisor is gone: its
    children are reported in state ``unknown``."""
    try:
        document = json.loads(Path(path).read_text())
        listed = [dict(c) for c in document["children"] if isinstance(c, dict)]
        published = float(document["published_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if (now if now is not None else time.time()) - published > STALE_AFTER:
        for status in listed:
            if status.get("state") != "stopped":
                status["state"] = "unknown"
    return listed


def _publish(
    base: Path,
    port: int,
    public_key: str,
    known_hosts: Path,
    port_env: str = "LXC_SIM_PORT",
    dir_env: str = "LXC_SIM_DIR",
) -> None:
    """Pin the host key for the port in use and tell this process (and the Ray cluster
    it starts next, which inherits its environment) where the demo host is."""
    known_hosts.write_text(f"[127.0.0.1]:{port} {public_key}\n")
    os.environ[port_env] = str(port)
    os.environ[dir_env] = str(base.resolve())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop_demo_host(var_dir: str | os.PathLike[str], name: str = "lxc-sim") -> bool:
    """Stop the demo simulator started by `ensure_demo_host`: through its supervisor when this
    process supervises it (else the supervisor would restart it), else by its recorded pid."""
    pid_file = Path(var_dir) / name / "sim.pid"
    if _supervisor is not None and child_name(name) in _supervisor.children:
        _supervisor.stop(child_name(name))
        pid_file.unlink(missing_ok=True)
        return True
    if not pid_file.exists():
        return False
    try:
        pid = int(pid_file.read_text().strip().partition(":")[0])
    except ValueError:
        return False
    pid_file.unlink()
    if pid and _alive(pid):
        os.kill(pid, 15)
        return True
    return False
