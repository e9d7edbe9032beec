"""`rayfleet down` stops whatever `rayfleet up` started so far, even while it still deploys."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx

from rayfleet.launcher import free_port
from tests.conftest import ROOT
from tests.polling import eventually_sync


def _answers(url: str, ok_only: bool = False) -> bool:
    try:
        response = httpx.get(url, timeout=2, trust_env=False)
    except httpx.HTTPError:
        return False
    return response.status_code == 200 or not ok_only


def test_down_right_after_the_first_app_answers_stops_everything(tmp_path):
    port, direct = free_port(), free_port()
    env = {
        **os.environ,
        "RAYFLEET_STATE_DIR": str(tmp_path),
        "RAYFLEET_PORT": str(port),
        "RAYFLEET_IGNORE_GEN_DIRECT_PORT": str(direct),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("RAY_ADDRESS", None)
    cmd = [sys.executable, "-m", "rayfleet.cli", "up", "--only", "ignore_gen", "asn", "--timeout", "300"]
    with open(tmp_path / "up.log", "w") as log:
        up = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        state_file = tmp_path / "rayfleet.json"

        def answering() -> bool:
            assert up.poll() is None, (tmp_path / "up.log").read_text()[-3000:]
            return bool(_answers(f"http://127.0.0.1:{port}/ignore/healthz", ok_only=True))

        eventually_sync(answering, timeout=300, interval=0.2, what="ignore_gen answering")
        assert json.loads(state_file.read_text())["pid"] == up.pid
        down = subprocess.run(
            [sys.executable, "-m", "rayfleet.cli", "down", "--timeout", "120"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert down.returncode == 0 and "rayfleet stopped" in down.stdout, down.stdout + down.stderr
        up.wait(timeout=30)  # exited (Ray's core may abort at interpreter exit after a SIGTERM: -6)
        assert not state_file.exists()
        assert not _answers(f"http://127.0.0.1:{port}/ignore/healthz")
        assert not _answers(f"http://127.0.0.1:{direct}/healthz")
    finally:
        if up.poll() is None:
            os.killpg(up.pid, 9)
            up.wait(timeout=30)
