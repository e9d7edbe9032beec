"""The demo nodes `rayfleet up` supervises: their restarts in /health/check and /metrics."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from deployments.autoscale.config import AutoscaleConfig
from sims.pve.demo import ensure_demo_host, published_children, stop_demo_host
from tests.conftest import free_port
from tests.deployments.autoscale.conftest import API_KEY, open_client
from tests.polling import eventually


async def test_a_killed_demo_node_is_restarted_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    monkeypatch.setenv("AUTOSCALE_SIM_PVE1_PORT", str(free_port()))
    monkeypatch.setenv("AUTOSCALE_SIM_PVE1_DIR", "unset")
    name = "autoscale-sim-pve1"
    info = ensure_demo_host(
        tmp_path, name=name, port_env="AUTOSCALE_SIM_PVE1_PORT", dir_env="AUTOSCALE_SIM_PVE1_DIR", node="pve1"
    )
    status_file = tmp_path / name / "children.json"
    host = {"host": "127.0.0.1", "port": info["port"], "key_file": info["key_file"], "known_hosts": info["known_hosts"]}
    config = AutoscaleConfig.model_validate(
        {
            "hosts": {"pve1": host},
            "monitor": {"enabled": False, "duckdb_path": None},
            "scaler": {"enabled": False},
            "health_cache_seconds": 0,
            "supervised_children": [str(status_file)],
        }
    )
    try:
        async for client in open_client(config):
            before = (await client.get("/health/check")).json()
            assert before["status"] == "healthy"
            assert [(c["name"], c["restarts"]) for c in before["children"]] == [(f"pve-sim/{name}", 0)]

            os.kill(info["pid"], signal.SIGKILL)
            await eventually(
                lambda: [c["restarts"] for c in published_children(status_file) if c["state"] == "running"] == [1],
                timeout=30,
                what="the supervisor restarted the node",
            )

            async def healthy(client=client) -> bool:
                response = await client.get("/health/check")
                return response.status_code == 200 and response.json()["children"][0]["restarts"] == 1

            await eventually(healthy, timeout=30, what="pct list answers again")
            text = (await client.get("/metrics")).text
            assert f'rayfleet_child_restarts{{child="pve-sim/{name}"}} 1.0' in text
            assert f'rayfleet_child_last_exit_code{{child="pve-sim/{name}"}} -9.0' in text
    finally:
        assert stop_demo_host(tmp_path, name) is True
