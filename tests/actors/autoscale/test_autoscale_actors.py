"""The monitor and scaler actors against pve-sim over real SSH, and the API served by uvicorn."""

from __future__ import annotations

import asyncio
import json
import socket

import duckdb
import httpx
import pytest
import uvicorn

from actors.autoscale.monitor import MonitorActor
from actors.autoscale.scaler import ScalerActor
from deployments.autoscale.app import create_app
from deployments.autoscale.state import AutoscaleState
from rayfleet.ssh import SSHHost
from rayfleet.state import LocalActorHandle, local_state
from sims.pve.load import Curve, LoadModel, ManualClock
from sims.pve.nodestatus import set_hardware
from sims.pve.scenario import day_scenario, install
from tests.deployments.autoscale.conftest import API_KEY, make_config
from tests.polling import eventually
from tests.sims.pve.simenv import SimEnv

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


@pytest.mark.parametrize(("disk_interval", "reads"), [(3600.0, 1), (0.0, 4)])
async def test_the_disk_is_read_every_disk_interval_and_samples_between_carry_the_last_reading(
    loaded_sim, tmp_path, disk_interval, reads
):
    """`df` per container at most every `monitor.disk_interval_seconds`; `/proc` every sample."""
    env, clock = loaded_sim
    db = tmp_path / "history.duckdb"
    monitor = MonitorActor("pve1", _ssh(env), duckdb_path=str(db), disk_interval=disk_interval)
    await _cycles(monitor, clock, 4)
    commands = env.commands()
    assert sum("pct exec 101 -- df -P /" in c for c in commands) == reads, commands
    assert sum("pct exec 101 -- cat /proc/stat" in c for c in commands) == 4
    await monitor.stop()
    rows = duckdb.connect(str(db)).execute("SELECT disk_pct FROM samples WHERE vmid = '101'").fetchall()
    assert len(rows) == 3 and all(r[0] is not None for r in rows), rows  # the first read makes no sample


class CountedMonitor(LocalActorHandle):
    """A monitor whose `history_since` answers are kept, to count the samples that crossed."""

    def __init__(self, monitor: MonitorActor) -> None:
        super().__init__(monitor)
        self.answers: list[dict] = []
        real = monitor.history_since

        async def counted(since: dict[str, float]) -> dict:
            answer = await real(since)
            self.answers.append(answer)
            return answer

        monitor.history_since = counted  # type: ignore[method-assign]


async def test_the_scaler_keeps_a_copy_of_the_monitors_rings_and_asks_only_for_new_samples(loaded_sim):
    env, clock = loaded_sim
    monitor = MonitorActor("pve1", _ssh(env), history_samples=4)
    handle = CountedMonitor(monitor)
    scaler = ScalerActor({"pve1": handle}, {"pve1": (32, 32768)}, "http://127.0.0.1:9", "AUTOSCALE_API_KEY")
    await _cycles(monitor, clock, 3)
    assert await scaler._histories("pve1", handle) == await monitor.histories()
    for _ in range(3):  # the ring of 4 turns over: the copy drops what the monitor dropped
        await _cycles(monitor, clock, 1)
        assert await scaler._histories("pve1", handle) == await monitor.histories()
        assert [len(c["samples"]) for c in handle.answers[-1]["containers"].values()] == [1, 1]
    # a restarted monitor holds only what it sampled since: the copy follows it, nothing older kept
    restarted = MonitorActor("pve1", _ssh(env), history_samples=4)
    handle = CountedMonitor(restarted)
    await _cycles(restarted, clock, 3)
    copy = await scaler._histories("pve1", handle)
    assert copy == await restarted.histories() and [len(v) for v in copy.values()] == [2, 2]
    await monitor.stop()
    await restarted.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _serve(env: SimEnv, monkeypatch) -> tuple[uvicorn.Server, asyncio.Task, int]:
    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    port = _free_port()
    config = make_config(env)
    app = create_app(config, AutoscaleState.from_ray(config, background=False))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started, timeout=10, what="the API server started")
    return server, task, port


@pytest.mark.parametrize("dry_run", [False, True])
async def test_the_scaler_decides_and_applies_through_the_api_with_its_key(loaded_sim, monkeypatch, dry_run):
    env, clock = loaded_sim
    with local_state():
        server, task, port = await _serve(env, monkeypatch)
        try:
            monitor = MonitorActor("pve1", _ssh(env))

            scaler = ScalerActor(
                {"pve1": LocalActorHandle(monitor)},
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


async def test_node_capacity_is_read_with_pvesh_and_kept_until_its_refresh(loaded_sim):
    env, _clock = loaded_sim
    env.model.containers["103"]["status"] = "stopped"
    node = env.model.node
    monitor = MonitorActor("pve1", _ssh(env), capacity_refresh=3600)
    cap = await monitor.node_capacity(node)
    assert any(f"pvesh get /nodes/{node}/lxc --output-format json" in c for c in env.commands())
    assert cap["guests"] == {"lxc/101": (2, 1024)}  # running guests only
    assert (cap["cores"], cap["memory_mb"], cap["errors"]) == (16, 64 * 1024, [])  # pve-sim's default node
    set_hardware(env.model, 24, 32_768)
    env.model.containers["103"]["status"] = "running"
    again = await monitor.node_capacity(node)
    assert (again["cores"], again["read_at"]) == (16, cap["read_at"])  # the hardware reading is kept...
    assert set(again["guests"]) == {"lxc/101", "lxc/103"}  # ...the guests are read every time
    assert sum(f"/nodes/{node}/status" in c for c in env.commands()) == 1
    eager = MonitorActor("pve1", _ssh(env), capacity_refresh=1e-9)
    assert (await eager.node_capacity(node))["cores"] == 24
    await monitor.stop()
    await eager.stop()


async def test_an_unknown_node_is_reported_with_pves_error_and_nothing_guessed(loaded_sim):
    env, _clock = loaded_sim
    monitor = MonitorActor("pve1", _ssh(env))
    cap = await monitor.node_capacity("pve9")
    assert cap["cores"] is None and cap["memory_mb"] is None and cap["guests"] == {}
    lookup = "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known"
    assert f"pvesh get /nodes/pve9/status: {lookup}" in cap["errors"]
    assert f"pvesh get /nodes/pve9/lxc: {lookup}" in cap["errors"]
    await monitor.stop()


async def _decide_101(env: SimEnv, clock: ManualClock, monkeypatch, node: str) -> tuple[list[dict], list[dict], dict]:
    """One cycle of a scaler whose config says pve1 has 32 cores, ignoring 103, 101 in a tier of up to 6
    cores; what it served about 101 (decisions, timeline) and its status."""
    with local_state():
        server, task, port = await _serve(env, monkeypatch)
        try:
            monitor = MonitorActor("pve1", _ssh(env))
            scaler = ScalerActor(
                {"pve1": LocalActorHandle(monitor)},
                {"pve1": (32, 32768)},
                f"http://127.0.0.1:{port}",
                "AUTOSCALE_API_KEY",
                settings=FAST,
                ignore=["103"],
                nodes={"pve1": node},
                tiers={"101": {"name": "web", "max_cores": 6, "priority": 3}},
            )
            server.config.app.state.component.scaler = LocalActorHandle(scaler)
            await _cycles(monitor, clock, 4, step=1)
            await scaler.cycle()
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers={"X-API-Key": API_KEY}) as c:
                served = (await c.get("/api/v1/decisions", params={"lxc_id": 101})).json()["data"]["decisions"]
                timeline = (await c.get("/api/v1/timelines", params={"lxc_id": 101})).json()["data"]["containers"]
            return served, timeline, await scaler.status()
        finally:
            server.should_exit = True
            await task


async def test_guests_the_model_does_not_manage_take_capacity_and_the_decision_is_served(loaded_sim, monkeypatch):
    env, clock = loaded_sim
    set_hardware(env.model, 32, 32_768)  # what the node tells, whatever the configuration says
    env.model.containers["103"]["config"]["cores"] = 28  # an ignored guest holding most of the node
    served, timeline, status = await _decide_101(env, clock, monkeypatch, env.model.node)
    cpu = next(d for d in served if d["resource"] == "cpu")
    # 32 (pvesh get /nodes/<n>/status) - 28 (103) - 2 (101) = 2 free: clamped from what the tier allows
    assert cpu["action"] == "set" and cpu["target"] == 4 and cpu["outcome"] == "applied"
    capacity = cpu["inputs"]["capacity"]
    assert capacity["source"].startswith(f"pvesh /nodes/{env.model.node}/status, read ")
    assert capacity["allocated_cores"] == 30 and capacity["free_cores"] == 2
    assert cpu["inputs"]["tier"]["name"] == "web" and cpu["inputs"]["tier"]["max_cores"] == 6
    assert cpu["inputs"]["capacity_clamped_from"] == 6
    assert env.model.containers["101"]["config"]["cores"] == 4
    assert status["capacity"]["pve1"]["other_cores"] == 28
    assert [t["vmid"] for t in timeline] == ["101"] and timeline[0]["tier"] == "web"
    assert len(timeline[0]["samples"]) >= 2 and timeline[0]["decisions"]


async def test_the_configured_capacity_stands_in_only_when_pvesh_fails_and_the_decision_says_so(
    loaded_sim, monkeypatch
):
    env, clock = loaded_sim
    env.model.containers["103"]["config"]["cores"] = 28
    served, _timeline, status = await _decide_101(env, clock, monkeypatch, "pve9")  # a node pvesh does not know
    cpu = next(d for d in served if d["resource"] == "cpu")
    source = cpu["inputs"]["capacity"]["source"]
    assert source.startswith("config (pvesh get /nodes/pve9/status: hostname lookup 'pve9' failed")
    assert "pvesh get /nodes/pve9/lxc: hostname lookup" in source  # and the guests it could not count
    assert cpu["inputs"]["capacity"]["host_cores"] == 32 and status["capacity"]["pve1"]["other_cores"] == 0
    assert cpu["action"] == "set" and cpu["target"] == 6  # the tier's maximum: the configured 32 leave room
