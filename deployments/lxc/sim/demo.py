"""The demo host of `make up`: one pve-sim process with keys under ``var/lxc-sim/``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import asyncssh

from .server import ensure_host_key

DEFAULT_PORT = 2222


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
        return b"deployments.lxc.sim" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def _client_key(path: Path) -> None:
    if path.exists():
        return
    key = asyncssh.generate_private_key("ssh-ed25519", comment="rayfleet-lxc-demo")
    key.write_private_key(str(path))
    os.chmod(path, 0o600)
    key.write_public_key(str(path) + ".pub")


def ensure_demo_host(
    var_dir: str | os.PathLike[str],
    *,
    name: str = "lxc-sim",
    port_env: str = "LXC_SIM_PORT",
    dir_env: str = "LXC_SIM_DIR",
    default_port: int = DEFAULT_PORT,
    node: str = "pve",
) -> dict[str, Any]:
    """Start (once) the demo pve-sim and return how to reach it.

    Keys, known_hosts, the model and the log live in ``<var_dir>/lxc-sim/``.
    The port is ``$LXC_SIM_PORT``, else 2222 (or a free port when 2222 belongs to
    another process). Calling it again while the simulator runs returns the same
    description with ``started: False``. It exports ``LXC_SIM_PORT`` and
    ``LXC_SIM_DIR`` so the Ray cluster started afterwards by this process (and
    the demo config's ``${LXC_SIM_DIR}`` paths) find it. The simulator exits with
    the process that started it.
    """
    base = Path(var_dir) / name
    base.mkdir(parents=True, exist_ok=True)
    explicit = os.environ.get(port_env)
    port = int(explicit) if explicit else default_port
    host_key_path = base / "ssh_host_ed25519_key"
    client_key = base / "client_key"
    authorized = base / "authorized_keys"
    known_hosts = base / "known_hosts"
    host_key = ensure_host_key(host_key_path)
    _client_key(client_key)
    authorized.write_text(Path(str(client_key) + ".pub").read_text())
    public = host_key.export_public_key("openssh").decode().strip()
    info: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": port,
        "user": "root",
        "key_file": str(client_key),
        "known_hosts": str(known_hosts),
        "state_dir": str(base / "state"),
        "log": str(base / "sim.log"),
        "pid": None,
        "started": False,
    }
    pid_file = base / "sim.pid"
    if pid_file.exists():
        try:
            pid, _, recorded = pid_file.read_text().strip().partition(":")
            pid_num, recorded_port = int(pid), int(recorded or port)
        except ValueError:
            pid_num, recorded_port = 0, port
        if pid_num and _alive(pid_num) and _port_open(recorded_port):
            info.update(pid=pid_num, port=recorded_port)
            _publish(base, recorded_port, public, known_hosts, port_env, dir_env)
            return info
    if _port_open(port):
        if explicit:
            raise RuntimeError(f"{port_env} {port} is taken by another process; choose a free port")
        port = _free_port()
        info["port"] = port
    log = open(base / "sim.log", "ab")
    project_root = Path(__file__).resolve().parents[3]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "deployments.lxc.sim",
            "--port",
            str(port),
            "--state",
            str(base / "state"),
            "--authorized-keys",
            str(authorized),
            "--host-key",
            str(host_key_path),
            "--exit-with-parent",
            str(os.getpid()),
            "--node",
            node,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=str(project_root),
        env={**os.environ, "PYTHONPATH": str(project_root)},
    )
    log.close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"pve-sim exited with {proc.returncode}; see {base / 'sim.log'}")
        if _port_open(port):
            break
        time.sleep(0.1)
    else:
        proc.terminate()
        raise RuntimeError(f"pve-sim did not listen on port {port} within 20 s; see {base / 'sim.log'}")
    pid_file.write_text(f"{proc.pid}:{port}")
    _publish(base, port, public, known_hosts, port_env, dir_env)
    info.update(pid=proc.pid, started=True)
    return info


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
        return sock.getsockname()[1]


def stop_demo_host(var_dir: str | os.PathLike[str], name: str = "lxc-sim") -> bool:
    """Stop the demo simulator started by `ensure_demo_host` (by its recorded pid)."""
    pid_file = Path(var_dir) / name / "sim.pid"
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
