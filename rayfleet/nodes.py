"""Real Ray nodes started with `ray start`, on loopback and free ports, owned by the caller.

The multi-node tier-3 test and the multi-node bench build a head and a worker node
on this machine exactly as an operator does on two machines. Each node gets its own
``--temp-dir`` and its own process group, so stopping (or killing) a node touches
only that node's processes, never another Ray cluster on the machine (`ray stop`
would stop every Ray process of the user).

Token authentication: the head is started with ``RAY_AUTH_MODE=token`` and
``RAY_AUTH_TOKEN_PATH`` naming a token file; every process that joins (the worker's
`ray start`, `rayfleet up` with ``RAY_ADDRESS``) gets the same two variables.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rayfleet.launcher import free_port


def ray_cli() -> str:
    """The `ray` executable next to this interpreter."""
    return str(Path(sys.executable).with_name("ray"))


def auth_env(token_path: Path) -> dict[str, str]:
    """What every process joining the cluster needs: token mode and where the token is."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_path)}


def write_token(path: Path) -> Path:
    """A fresh cluster token (mode 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32))
    return path


@dataclass
class Node:
    """One `ray start` node: its process group and folder."""

    name: str
    temp_dir: Path
    pgid: int
    log: Path
    resources: dict[str, float] = field(default_factory=dict)

    def pids(self) -> list[int]:
        """Every live process of this node (found by its temp dir in the command line)."""
        out = []
        marker = str(self.temp_dir)
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                out.append(int(entry.name))
        return out

    def kill(self) -> None:
        """SIGKILL the node (a machine dying): its group and anything left naming its folder."""
        for _ in range(3):
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.3)
            if not self.pids():
                return


def _ports_args() -> list[str]:
    return [
        "--node-manager-port",
        str(free_port()),
        "--object-manager-port",
        str(free_port()),
        "--metrics-export-port",
        str(free_port()),
        "--dashboard-agent-listen-port",
        str(free_port()),
        "--dashboard-agent-grpc-port",
        str(free_port()),
        "--runtime-env-agent-port",
        str(free_port()),
    ]


def log_monitor_args() -> list[str]:
    """`ray start` options for Ray's log monitor. It globs the node's log folder and reads every worker's
    log ten times a second to publish new lines to drivers that print them; `rayfleet up` prints them
    only with ``RAYFLEET_LOG_TO_DRIVER``, so otherwise it is not started (it took about 6 % of a core on
    an idle fleet). The logs stay in the node's folder either way."""
    return [] if os.environ.get("RAYFLEET_LOG_TO_DRIVER") else ["--include-log-monitor", "false"]


def start_node(name: str, root: Path, *, attempts: int = 3, **options: Any) -> tuple[Node, str]:
    """`ray start` a head (no ``head_address``) or a worker joining it; returns (node, GCS address).

    ``options``: ``head_address``, ``port`` (a head's GCS port; a free one by default), ``num_cpus``,
    ``node_ip``, ``resources``, ``env``, ``extra_args``, ``timeout`` (see `_start_node_once`). `ray start` gives a raylet 30 s to register
    (fixed in Ray 2.60); on a loaded machine that can run out, so a failed start is
    cleaned up and retried.
    """
    for attempt in range(1, attempts + 1):
        try:
            return _start_node_once(name, root, **options)
        except RuntimeError:
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")


def _start_node_once(
    name: str,
    root: Path,
    *,
    head_address: str | None = None,
    port: int | None = None,
    num_cpus: float = 1,
    node_ip: str = "127.0.0.1",
    resources: dict[str, float] | None = None,
    env: dict[str, str] | None = None,
    extra_args: list[str] | None = None,
    timeout: float = 120.0,
) -> tuple[Node, str]:
    """`ray start` a head (``head_address=None``) or a worker joining it; returns (node, GCS address)."""
    temp_dir = root / name
    temp_dir.mkdir(parents=True, exist_ok=True)
    log = root / f"{name}.log"
    cmd = [ray_cli(), "start", "--node-ip-address", node_ip, "--num-cpus", str(int(num_cpus))]
    cmd += ["--resources", json.dumps(resources or {}), "--disable-usage-stats", "--temp-dir", str(temp_dir)]
    cmd += _ports_args() + log_monitor_args() + list(extra_args or [])
    if head_address is None:
        port = port or free_port()
        address = f"{node_ip}:{port}"
        cmd += ["--head", "--port", str(port), "--include-dashboard", "false"]
        cmd += ["--ray-client-server-port", str(free_port()), "--dashboard-port", str(free_port())]
    else:
        address = head_address
        cmd += ["--address", head_address]
    child_env = {**os.environ, **(env or {})}
    child_env.pop("RAY_ADDRESS", None)
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=child_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    node = Node(name, temp_dir, proc.pid, log, dict(resources or {}))
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        node.kill()
        raise RuntimeError(f"ray start {name} hung:\n{log.read_text()[-4000:]}") from None
    if proc.returncode != 0:
        node.kill()
        raise RuntimeError(f"ray start {name} failed ({proc.returncode}):\n{log.read_text()[-4000:]}")
    return node, address
