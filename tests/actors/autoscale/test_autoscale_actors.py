"""The monitor and scaler actors against pve-sim over real SSH, and the API served by uvicorn."""

from __future__ import annotations

import asyncio
import json
import socket

import duckdb
import pytest
import uvicorn

from actors.autoscale.monitor import MonitorActor
from actors.autoscale.scaler import ScalerActor
from deployments.lxc.sim.load import Curve, LoadModel, ManualClock
from deployments.lxc.sim.scenario import day_scenario, install
from rayfleet.ssh import SSHHost
from rayfleet.state import local_state
from tests.deployments.autoscale.conftest import API_KEY, make_config
from tests.deployments.lxc.simenv import SimEnv
from tests.polling import eventually

FAST = {
    "window_seconds": 5,
    "trend_seconds": 3,
    "horizon_seconds": 1,
    "downscale_delay_seconds": 2,
    "down_cooldown_seconds": 0,
    "up_cooldown_seconds": 0,
    "memory_window_seconds": 5,
}


@pytest.fixture
def loaded_sim(tmp_path):
    env = SimEnv(tmp_path / "sim")
    containers = {v: c for v, c in day_scenario(7)["pve1"].items() if v in ("101", "103")}
    install(env.model, containers)
    clock = ManualClock(0.0)
    curves = {
        "101": Curve.from_dict({"kind": "steady", "cpu": 3.5, "mem": 400, "noise": 0}),
        "103": Curve.from_dict({"kind": "steady", "cpu": 0.2, "mem": 200, "noise": 0}),
    }
    env.sim.host.load_file.model = LoadModel(curves, clock)
    yield env, clock
    env.stop()


def _ssh(env: SimEnv) -> SSHHost:
    return SSHHost("127.0.0.1", env.port, key_file=str(env.client_key), known_hosts=str(env.known_hosts))


async def _cycles(monitor: MonitorActor, clock: ManualClock, n: int, step: float = 60.0) -> None:
    for _ in range(n):
        clock.t += step
        await monitor.cycle()


async def test_monitor_samples_running_containers_over_ssh_into_a_bounded_store(loaded_sim, tmp_path):
    env, clock = loaded_sim
    db = tmp_path / "history.duckdb"
    monitor = MonitorActor("pve1", _ssh(env), history_samples=4, duckdb_path=str(db), retention_samples=100)
    await _cycles(monitor, clock, 6, step=60)
    histories = await monitor.histories()
    assert set(histories) == {"101", "103"}
    assert len(histories["101"]) == 4  # ring buffer
    assert histories["101"][-1]["cpu_pct"] == pytest.approx(100)
    assert histories["103"][-1]["cpu_pct"] == pytest.approx(10, abs=1)
    assert any("pct exec 101 -- cat /proc/stat" in c for c in env.commands())
    await monitor.stop()
    rows = duckdb.connect(str(db)).execute("SELECT vmid, count(*) FROM samples GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [("101", 5), ("103", 5)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _serve(env: SimEnv, monkeypatch) -> tuple[uvicorn.Server, asyncio.Task, int]:
    from deployments.autoscale.app import create_app

    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    port = _free_port()
    app = create_app(make_config(env), state={})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started, what="uvicorn started")
    return server, task, port


@pytest.mark.parametrize("dry_run", [False, True])
async def test_the_scaler_decides_and_applies_through_the_api_with_its_key(loaded_sim, monkeypatch, dry_run):
    env, clock = loaded_sim
    with local_state():
        server, task, port = await _serve(env, monkeypatch)
        try:
            monitor = MonitorActor("pve1", _ssh(env))

            class Handle:  # the `.method.remote()` surface the scaler calls, over a plain object
                class histories:
                    @staticmethod
                    async def remote():
                        return await monitor.histories()

            scaler = ScalerActor(
                {"pve1": Handle()},
                {"pve1": (32, 32768)},
                f"http://127.0.0.1:{port}",
                "AUTOSCALE_API_KEY",
                dry_run=dry_run,
                settings=FAST,
            )
            await _cycles(monitor, clock, 4, step=1)
            await scaler.cycle()
            decisions = await scaler.recent()
        finally:
            server.should_exit = True
            await task
    up = [d for d in decisions if d["vmid"] == "101" and d["resource"] == "cpu"]
    assert up and up[0]["action"] == "set" and up[0]["target"] > 2
    assert json.dumps(up[0]["inputs"])  # every decision carries its inputs
    assert up[0]["applied"] is (not dry_run) and up[0]["dry_run"] is dry_run
    applied = env.model.containers["101"]["config"]["cores"]
    assert (applied > 2) is (not dry_run)
    assert any("pct config 101" in c for c in env.commands())
