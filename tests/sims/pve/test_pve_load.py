"""pve-sim load: demand curves, CPU and memory that respond to the allocation, read through /proc."""

from __future__ import annotations

import json
import shlex

import pytest

from actors.autoscale.history import RingHistory
from actors.autoscale.sampling import parse_counters, sample_argv
from sims.pve import make_host
from sims.pve.load import Curve, LoadModel, ManualClock
from sims.pve.scenario import day_scenario, install


def _host(tmp_path, curves: dict[str, dict], cores: int = 2, memory: int = 1024):
    host = make_host(tmp_path / "node", node="pve1")
    install(
        host.model,
        {vmid: {"config": {"cores": cores, "memory": memory, "swap": 0, "hostname": f"ct{vmid}"}} for vmid in curves},
    )
    clock = ManualClock(0.0)
    host.load_file.model = LoadModel({v: Curve.from_dict(c) for v, c in curves.items()}, clock)
    return host, clock


async def _sample(host, history: RingHistory, vmid: str, t: float):
    result = await host.execute(shlex.join(sample_argv(vmid)))
    assert result.rc == 0, result.stderr
    return history.observe(vmid, parse_counters(result.stdout, t))


async def test_cpu_percent_is_demand_over_cores_and_follows_a_scale_up(tmp_path):
    host, clock = _host(tmp_path, {"101": {"kind": "steady", "cpu": 1.5, "noise": 0}})
    history = RingHistory()
    await _sample(host, history, "101", 0)
    clock.t = 600
    sample = await _sample(host, history, "101", 600)
    assert sample.cores == 2 and sample.cpu_pct == pytest.approx(75, abs=0.5)
    assert (await host.execute("pct set 101 --cores 3")).rc == 0
    clock.t = 1200
    sample = await _sample(host, history, "101", 1200)
    assert sample.cores == 3 and sample.cpu_pct == pytest.approx(50, abs=0.5)


async def test_demand_above_the_cores_saturates_and_counts_against_the_slo(tmp_path):
    host, clock = _host(tmp_path, {"101": {"kind": "steady", "cpu": 3.0, "noise": 0}})
    history = RingHistory()
    await _sample(host, history, "101", 0)
    clock.t = 300
    sample = await _sample(host, history, "101", 300)
    assert sample.cpu_pct == pytest.approx(100)
    stats = host.load_file.model.stats("101")
    assert stats["over_slo_s"] == pytest.approx(300)
    assert stats["core_s"] == pytest.approx(600)


async def test_memory_demand_above_the_allocation_is_an_oom_and_a_leak_restarts(tmp_path):
    curve = {"kind": "leak", "mem": 300, "leak_mb_per_h": 600, "noise": 0}
    host, clock = _host(tmp_path, {"101": curve}, memory=512)
    history = RingHistory()
    await _sample(host, history, "101", 0)
    clock.t = 1800
    sample = await _sample(host, history, "101", 1800)
    assert sample.oom_kills >= 1
    events = await host.execute("pct exec 101 -- cat /sys/fs/cgroup/memory.events")
    assert "oom_kill " in events.stdout
    assert host.load_file.model.stats("101")["oom_s"] > 0
    assert sample.memory_used_mb < 512


def test_curves_are_deterministic_per_seed_and_shaped():
    daily = Curve.from_dict({"kind": "daily", "cpu": 0.5, "amplitude": 2.0, "peak_hour": 14, "noise": 0})
    assert daily.demand(101, 14 * 3600, 0)[0] == pytest.approx(2.5)
    assert daily.demand(101, 2 * 3600, 0)[0] == pytest.approx(0.5)
    runaway = Curve.from_dict({"kind": "runaway", "runaway_at_h": 1, "runaway_cores": 16})
    assert runaway.demand(101, 1800, 0)[1] == 0 and runaway.demand(101, 7200, 0)[1] == 16
    spikes = Curve.from_dict({"kind": "spikes", "spikes_per_hour": 1.0, "spike_cores": 2, "noise": 0}, seed=3)
    hot = [t for t in range(0, 3600, 60) if spikes.demand(101, t, 0)[0] > 1.5]
    assert 10 <= len(hot) <= 13
    assert [spikes.demand(101, t, 0) for t in range(0, 3600, 300)] == [
        Curve.from_dict({"kind": "spikes", "spikes_per_hour": 1.0, "spike_cores": 2, "noise": 0}, seed=3).demand(
            101, t, 0
        )
        for t in range(0, 3600, 300)
    ]


def test_replay_curves_interpolate_user_points():
    curve = Curve.from_dict({"kind": "replay", "points": [[0, 1.0, 100], [3600, 3.0, 300]], "noise": 0})
    cpu, _, mem = curve.demand(101, 1800, 0)
    assert cpu == pytest.approx(2.0) and mem == pytest.approx(200)


def test_bad_curves_are_refused():
    with pytest.raises(ValueError):
        Curve.from_dict({"kind": "sawtooth"})
    with pytest.raises(ValueError):
        Curve.from_dict({"kind": "steady", "colour": "red"})
    with pytest.raises(ValueError):
        Curve.from_dict({"kind": "replay", "points": [[0, 1, 1]]})


async def test_a_load_file_in_the_state_directory_drives_a_sim_process_host(tmp_path):
    host = make_host(tmp_path / "node", node="pve1")
    install(host.model, day_scenario(7)["pve1"])
    (tmp_path / "node" / "load.json").write_text(
        json.dumps({"speed": 3600, "containers": {"101": {"kind": "steady", "cpu": 1.0, "noise": 0}}})
    )
    first = await host.execute("pct exec 101 -- cat /proc/stat")
    assert first.stdout.startswith("cpu ")
    assert host.load_file.current() is not None and host.load_file.current().has("101")


async def test_containers_without_load_keep_their_old_meminfo(tmp_path):
    host, _ = _host(tmp_path, {"101": {"kind": "steady"}})
    host.model.new_container("150", {"cores": 1, "memory": 256})["status"] = "running"
    out = (await host.execute("pct exec 150 -- cat /proc/meminfo")).stdout
    assert "MemTotal:" in out and "262144 kB" in out
