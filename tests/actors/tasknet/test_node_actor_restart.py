"""A node actor that crashes is restarted by Ray, reloads its signed log and reconnects to its peers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.e2e
def test_a_crashed_node_actor_recovers_its_log_and_peers():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "tests.actors.tasknet.restart_check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    lines = result.stdout.split()
    assert result.returncode == 0, result.stderr[-2000:]
    assert "recovered" in lines
    assert lines[lines.index("rewired") + 1] == "2"
