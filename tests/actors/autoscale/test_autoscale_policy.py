"""The scaling model decides: forecast, hysteresis, cooldowns, capacity, memory floor, anomalies."""

from __future__ import annotations

import random

from actors.autoscale.policy import (
    Allocation,
    ContainerView,
    ForecastPolicy,
    HostView,
    Limits,
    ModelSettings,
    ThresholdPolicy,
)
from actors.autoscale.sampling import Sample

MIN = 60.0


def sample(t: float, cores: int, used: float, mem: float = 300, traffic: float | None = None, oom: int = 0) -> Sample:
    pct = min(100.0, 100 * used / cores)
    served = min(used, cores) if traffic is None else traffic
    return Sample(
        t, cores, pct, min(used, cores), 1024, mem, 0, 0, served * 200_000, served * 75_000, served * 2e6, served * 6e6
    )


def series(n: int, cores: int, used, mem=300.0, start: float = 0, traffic=None, seed: int = 1) -> list[Sample]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        u = used(i) if callable(used) else used
        u *= 1 + rng.uniform(-0.03, 0.03)
        tr = traffic(i) if callable(traffic) else traffic
        out.append(sample(start + i * MIN, cores, u, mem, tr))
    return out


def host(vmid: str, alloc: Allocation, samples: list[Sample], cores: int = 64, memory: int = 65536) -> list[HostView]:
    return [HostView("pve1", cores, memory, {vmid: ContainerView(vmid, alloc, samples, Limits())})]


def run(policy: ForecastPolicy, alloc: Allocation, samples: list[Sample], **kw):
    """Feed the policy one cycle per sample (as the scaler would) and return every decision."""
    out = []
    for i in range(2, len(samples) + 1):
        out += policy.decide(samples[i - 1].t, host("101", alloc, samples[:i], **kw))
    return out


def test_sustained_demand_above_the_allocation_scales_up_to_the_right_size():
    p = ForecastPolicy()
    decisions = run(p, Allocation(2, 1024), series(40, 2, 1.9))
    cpu = [d for d in decisions if d.resource == "cpu" and d.action == "set"]
    assert cpu and cpu[0].target == 3  # ceil(1.9 * 1.15 / 0.85) = 3
    assert {"p", "trend", "forecast", "cpu_pct"} <= set(cpu[0].inputs)


def test_scale_down_waits_for_the_downscale_delay_but_scale_up_does_not_wait():
    s = ModelSettings(downscale_delay_seconds=1200, upscale_delay_seconds=0, window_seconds=600)
    low = series(60, 4, 0.5)
    downs = [d for d in run(ForecastPolicy(s), Allocation(4, 1024), low) if d.action == "set" and d.resource == "cpu"]
    assert downs and downs[0].target < 4
    assert downs[0].t >= 1200
    ups = [d for d in run(ForecastPolicy(s), Allocation(1, 1024), series(5, 1, 1.0)) if d.resource == "cpu"]
    assert ups and ups[0].action == "set" and ups[0].t <= 2 * MIN


def test_cooldown_holds_a_second_change():
    s = ModelSettings(up_cooldown_seconds=600, saturated_factor=1.0)
    samples = series(30, 1, 1.0)
    p = ForecastPolicy(s)
    p.decide(samples[1].t, host("101", Allocation(1, 1024), samples[:2]))
    later = p.decide(samples[3].t, host("101", Allocation(2, 1024), [*samples[:3], sample(3 * MIN, 2, 2.0)]))
    assert any(d.action == "hold" and d.reason.startswith("cooldown") for d in later)


def test_memory_never_goes_below_observed_use_plus_margin():
    s = ModelSettings(downscale_delay_seconds=0, down_cooldown_seconds=0)
    decisions = run(ForecastPolicy(s), Allocation(2, 8192), series(40, 2, 1.0, mem=3000))
    ram = [d for d in decisions if d.resource == "ram" and d.action == "set"]
    assert ram and all(d.target >= 3000 * 1.3 for d in ram)


def test_an_oom_raises_memory_at_least_twenty_percent():
    samples = series(30, 2, 1.0, mem=1024)
    samples[-1] = sample(samples[-1].t, 2, 1.0, 1024, oom=1)
    decisions = ForecastPolicy().decide(samples[-1].t, host("101", Allocation(2, 1024), samples))
    ram = [d for d in decisions if d.resource == "ram"]
    assert ram and ram[0].action == "set" and ram[0].target >= 1024 * 1.2


def test_host_capacity_clamps_or_holds_a_scale_up():
    samples = series(10, 2, 2.0)
    clamped = ForecastPolicy().decide(samples[-1].t, host("101", Allocation(2, 1024), samples, cores=4))
    cpu = next(d for d in clamped if d.resource == "cpu")
    assert cpu.action == "set" and cpu.target == 4 and cpu.inputs["capacity_clamped_from"] > 4
    full = ForecastPolicy().decide(samples[-1].t, host("101", Allocation(2, 1024), samples, cores=2))
    assert next(d for d in full if d.resource == "cpu").action == "hold"


def test_a_runaway_is_flagged_instead_of_fed_cores_while_a_traffic_burst_is_served():
    normal = series(60, 2, 0.8)
    runaway = normal + series(4, 2, 2.0, start=60 * MIN, traffic=0.0, seed=2)
    burst = normal + series(4, 2, 2.0, start=60 * MIN, seed=2)
    runaway_cpu = [d for d in run(ForecastPolicy(), Allocation(2, 1024), runaway) if d.resource == "cpu"]
    burst_cpu = [d for d in run(ForecastPolicy(), Allocation(2, 1024), burst) if d.resource == "cpu"]
    assert any(d.action == "flag" and d.reason.startswith("runaway") for d in runaway_cpu)
    assert not any(d.action == "set" and d.target > 2 for d in runaway_cpu)
    assert any(d.action == "set" and d.target > 2 for d in burst_cpu)
    flagged = next(d for d in runaway_cpu if d.action == "flag")
    assert flagged.inputs["anomaly"] is True and flagged.inputs["efficiency"] > flagged.inputs.get("p", 0)


def test_an_anomaly_holds_back_a_scale_down():
    s = ModelSettings(downscale_delay_seconds=0, down_cooldown_seconds=0, window_seconds=120)
    steady = series(60, 4, lambda i: 2.5 + (i % 5) * 0.1)
    dip = steady + series(3, 4, 0.05, start=60 * MIN, seed=3)
    p = ForecastPolicy(s)
    decisions = run(p, Allocation(4, 1024), dip)
    cpu = [d for d in decisions if d.resource == "cpu" and d.t >= 60 * MIN]
    assert cpu and cpu[-1].action == "hold" and cpu[-1].reason.startswith("anomaly")


def test_the_threshold_policy_is_the_anchors_loop():
    p = ThresholdPolicy()
    hot = p.decide(1, host("101", Allocation(2, 1024), [sample(0, 2, 1.8, mem=900)]))
    assert {(d.resource, d.target) for d in hot} == {("cpu", 3), ("ram", 1536)}
    cold = p.decide(1, host("101", Allocation(2, 1024), [sample(0, 2, 0.2, mem=100)]))
    assert {(d.resource, d.target) for d in cold} == {("cpu", 1), ("ram", 512)}


def test_a_tiers_bounds_clamp_the_recommendation():
    gold = Limits(min_cores=3, max_cores=4, min_memory_mb=2048, max_memory_mb=4096, priority=10)
    samples = series(10, 2, 2.0)
    view = ContainerView("101", Allocation(2, 1024), samples, gold, tier="gold")
    decisions = ForecastPolicy().decide(samples[-1].t, [HostView("pve1", 64, 65536, {"101": view})])
    cpu = next(d for d in decisions if d.resource == "cpu")
    ram = next(d for d in decisions if d.resource == "ram")
    assert cpu.action == "set" and cpu.target == 4  # wants ceil(6 * 1.15 / 0.85) = 9, capped by the tier
    assert ram.action == "set" and ram.target == 2048  # the tier's floor, whatever the use
    assert cpu.inputs["tier"] == {
        "name": "gold",
        "min_cores": 3,
        "max_cores": 4,
        "min_memory_mb": 2048,
        "max_memory_mb": 4096,
        "priority": 10,
    }


def test_under_contention_the_higher_priority_container_gets_the_free_cores_first():
    hot = series(10, 2, 2.0)
    low = ContainerView("101", Allocation(2, 1024), hot, Limits(priority=0), tier="batch")
    high = ContainerView("102", Allocation(2, 1024), hot, Limits(priority=5), tier="web")
    view = HostView("pve1", 6, 65536, {"101": low, "102": high})  # 2 cores free
    decisions = [d for d in ForecastPolicy().decide(hot[-1].t, [view]) if d.resource == "cpu"]
    by_id = {d.vmid: d for d in decisions}
    assert by_id["102"].action == "set" and by_id["102"].target == 4
    assert by_id["101"].action == "hold" and by_id["101"].outcome == "refused_capacity"
    assert decisions[0].vmid == "102"  # decided first


def test_capacity_counts_guests_the_policy_does_not_manage():
    samples = series(10, 2, 2.0)
    view = ContainerView("101", Allocation(2, 1024), samples, Limits())
    host_view = HostView("pve1", 8, 65536, {"101": view}, other_cores=6, other_memory_mb=1024, source="pvesh")
    cpu = next(d for d in ForecastPolicy().decide(samples[-1].t, [host_view]) if d.resource == "cpu")
    assert cpu.action == "hold" and cpu.outcome == "refused_capacity"
    assert cpu.inputs["capacity"] == {
        "source": "pvesh",
        "host_cores": 8,
        "host_memory_mb": 65536,
        "allocated_cores": 8,
        "allocated_memory_mb": 2048,
        "free_cores": 0,
        "free_memory_mb": 63488,
    }


def test_every_decision_carries_a_summary_of_its_samples_and_an_outcome():
    samples = series(10, 2, 1.9)
    d = ForecastPolicy().decide(samples[-1].t, host("101", Allocation(2, 1024), samples))[0]
    summary = d.inputs["samples"]
    assert summary["count"] == 10 and summary["first_t"] == 0 and summary["last_t"] == 9 * MIN
    assert summary["cpu_pct"] == samples[-1].cpu_pct and summary["memory_used_mb"] == samples[-1].memory_used_mb
    d.dry_run = True
    d.settle()
    assert d.outcome == "dry_run"


def test_a_tier_whose_minimum_exceeds_its_maximum_is_refused():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Limits(min_cores=5, max_cores=4)
    with pytest.raises(ValidationError):
        Limits(min_memory_mb=4096, max_memory_mb=2048)
