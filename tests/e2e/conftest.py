"""Tier 3: one `rayfleet up` for the whole session, tests go through real HTTP.

The cluster is started exactly as a user starts it (`rayfleet up`, in a child
process) on free ports, with its own secrets file, and stopped with
`rayfleet down`'s signal at the end. `RAYFLEET_E2E_APPS=a,b` limits the
applications deployed while developing one component.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from rayfleet.secrets import read_secrets
from tests.conftest import ROOT, free_port


class Cluster:
    def __init__(self, base_url: str, secrets_path: str, apps: list[str], log: Path) -> None:
        self.base_url = base_url
        self.secrets_path = secrets_path
        self.secrets = read_secrets(secrets_path)
        self.apps = apps
        self.log = log


def _wait_up(proc: subprocess.Popen, log: Path, state_file: Path, timeout: float) -> dict:
    import json

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"rayfleet up exited with {proc.returncode}:\n{log.read_text()[-6000:]}")
        if state_file.exists() and "rayfleet is up" in log.read_text():
            return json.loads(state_file.read_text())
        time.sleep(0.5)
    raise RuntimeError(f"rayfleet up not ready after {timeout:.0f}s:\n{log.read_text()[-6000:]}")


@pytest.fixture(scope="session")
def cluster(tmp_path_factory) -> Cluster:
    work = tmp_path_factory.mktemp("rayfleet-e2e")
    port = free_port()
    log = work / "rayfleet-up.log"
    env = dict(os.environ)
    env.update({
        "RAYFLEET_PORT": str(port),
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(ROOT),
        "RAYFLEET_STATE_DIR": str(work),
        "PYTHONUNBUFFERED": "1",
    })
    # components that bind their own data-plane ports get free ones in tests
    env.setdefault("LLM_GATEWAY__SERVER__PORT", str(free_port()))
    env.pop("RAY_ADDRESS", None)
    cmd = [sys.executable, "-m", "rayfleet.cli", "up", "--timeout", "300"]
    apps = os.environ.get("RAYFLEET_E2E_APPS")
    if apps:
        cmd += ["--only", *apps.split(",")]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        state = _wait_up(proc, log, work / "rayfleet.json", timeout=420)
    except Exception:
        _stop(proc)
        raise
    yield Cluster(state["base_url"], state["secrets"], state["apps"], log)
    _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture(scope="session")
def serve_url(cluster: Cluster) -> str:
    """Base URL of the Serve HTTP ingress, e.g. http://127.0.0.1:PORT (no trailing slash)."""
    return cluster.base_url


@pytest.fixture(scope="session")
def cluster_secrets(cluster: Cluster) -> dict[str, str]:
    """The secrets the cluster's replicas were given (var/secrets.env of this run)."""
    return cluster.secrets


def needs_app(cluster: Cluster, name: str) -> None:
    """Skip a component's e2e tests when RAYFLEET_E2E_APPS leaves it out (never in CI)."""
    if name not in cluster.apps:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{name} was not deployed")
        pytest.skip(f"{name} not deployed in this run (RAYFLEET_E2E_APPS)")


@pytest.fixture
def http(serve_url: str):
    with httpx.Client(base_url=serve_url, timeout=30.0, trust_env=False) as client:
        yield client
