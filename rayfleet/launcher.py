"""Start `rayfleet up` as a child process and wait until it serves.

The tier-3 tests and the benchmarks run the cluster exactly as a user does,
on free ports and with their own state folder, through this one helper.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rayfleet.secrets import read_secrets

DEMO_HOST_PORTS = ("LXC_SIM_PORT", "AUTOSCALE_SIM_PVE1_PORT", "AUTOSCALE_SIM_PVE2_PORT")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Launched:
    """A running `rayfleet up` child process."""

    proc: subprocess.Popen[bytes]
    base_url: str
    apps: list[str]
    state_dir: Path
    secrets_path: str
    log: Path
    secrets: dict[str, str] = field(default_factory=dict)
    direct: dict[str, str] = field(default_factory=dict)

    def stop(self, timeout: float = 90.0) -> None:
        """SIGTERM (what `rayfleet down` sends), then SIGKILL the group if it hangs."""
        if self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def _free_direct_ports(cwd: Path, config: str, apps: list[str] | None) -> dict[str, str]:
    """A free port for every application that declares a direct port (``RAYFLEET_<APP>_DIRECT_PORT``)."""
    from rayfleet.deploy import direct_port_env, read_serve_config

    out = {}
    for app in read_serve_config(cwd / config).get("applications", []):
        if app.get("args", {}).get("direct") and (not apps or app["name"] in apps):
            out[direct_port_env(app["name"])] = str(free_port())
    return out


def launch(
    state_dir: Path,
    apps: list[str] | None = None,
    *,
    ingress: str | None = None,
    config: str = "serve.yaml",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 420.0,
) -> Launched:
    """Run `rayfleet up` (optionally `--only apps`) on a free port; return once it is up.

    Raises RuntimeError with the tail of its log when it exits or times out.
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    log = state_dir / "rayfleet-up.log"
    child_env = dict(os.environ)
    child_env.update({"RAYFLEET_PORT": str(free_port()), "RAYFLEET_STATE_DIR": str(state_dir), "PYTHONUNBUFFERED": "1"})
    child_env.pop("RAY_ADDRESS", None)  # a private cluster unless the caller passes RAY_ADDRESS in `env`
    child_env.update(_free_direct_ports(cwd or Path.cwd(), config, apps))
    # each launched fleet keeps its durable actor state in its own folder, not in the home's var/,
    # and its demo hosts (pve-sim) on ports of its own, so two fleets can run side by side
    # (always: a store the caller's own environment names is another fleet's; `env` may name one)
    child_env["RAYFLEET_DURABLE_DSN"] = f"sqlite:///{state_dir.resolve() / 'durable.sqlite3'}"
    for sim_port in DEMO_HOST_PORTS:
        child_env.setdefault(sim_port, str(free_port()))
    child_env.update(env or {})
    cmd = [sys.executable, "-m", "rayfleet.cli", "up", "--config", config, "--timeout", str(int(timeout))]
    if ingress:
        cmd += ["--ingress", ingress]
    if ingress == "haproxy":
        # HAProxy's stats and metrics listeners default to fixed ports another cluster may hold
        child_env.setdefault("RAY_SERVE_HAPROXY_STATS_PORT", str(free_port()))
        child_env.setdefault("RAY_SERVE_HAPROXY_METRICS_PORT", str(free_port()))
    if apps:
        cmd += ["--only", *apps]
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=child_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    state_file = state_dir / "rayfleet.json"
    deadline = time.monotonic() + timeout + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"rayfleet up exited with {proc.returncode}:\n{log.read_text()[-6000:]}")
        if state_file.exists() and "rayfleet is up" in log.read_text():
            state = json.loads(state_file.read_text())
            return Launched(
                proc,
                state["base_url"],
                state["apps"],
                state_dir,
                state["secrets"],
                log,
                read_secrets(state["secrets"]),
                {k: v.replace("{node}", "127.0.0.1") for k, v in (state.get("direct") or {}).items()},
            )
        if time.monotonic() > deadline:
            Launched(proc, "", [], state_dir, "", log).stop()
            raise RuntimeError(f"rayfleet up not ready after {timeout:.0f}s:\n{log.read_text()[-6000:]}")
        time.sleep(0.5)
