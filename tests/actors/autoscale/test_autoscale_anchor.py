"""The anchor's algorithm (proxmox-lxc-autoscale's published loop), reimplemented as a policy for the week's judging."""

from __future__ import annotations

from actors.autoscale.anchor import AnchorPolicy
from actors.autoscale.policy import Allocation, ContainerView, HostView, Limits
from tests.actors.autoscale.test_autoscale_policy import sample


def _view(cores: int, memory: int, used: float, mem: float, host_cores: int = 32) -> list[HostView]:
    view = ContainerView("101", Allocation(cores, memory), [sample(0, cores, used, mem=mem)], Limits())
    return [HostView("pve1", host_cores, 65536, {"101": view})]


def test_cpu_above_80_percent_adds_cores_in_proportion_clamped_to_the_max_increment():
    p = AnchorPolicy()
    # 90 % busy: int((90 - 80) / 2) = 5, clamped to core_max_increment 2
    up = {d.resource: d for d in p.decide(12 * 3600, _view(2, 1024, 1.8, 600))}
    assert up["cpu"].action == "set" and up["cpu"].target == 4


def test_cpu_under_20_percent_removes_cores_and_memory_under_20_percent_shrinks_by_the_chunk():
    p = AnchorPolicy()
    down = {d.resource: d for d in p.decide(12 * 3600, _view(4, 4096, 0.2, 400))}
    # 5 % busy: max(1, int((20 - 5) / 2)) = 7, at most 4 - min_cores 1 = 3, at least core_min_increment 1
    assert down["cpu"].action == "set" and down["cpu"].target == 1
    # 9.8 % of 4096 MB: the decrement's 5 MB is under min_decrease_chunk, so 128 MB go
    assert down["ram"].action == "set" and down["ram"].target == 4096 - 128


def test_memory_above_80_percent_grows_in_proportion():
    p = AnchorPolicy()
    up = {d.resource: d for d in p.decide(12 * 3600, _view(2, 1000, 1.0, 900))}
    # 90 %: max(256, int((90 - 80) * 256 / 1.5)) = 1706
    assert up["ram"].action == "set" and up["ram"].target == 1000 + 1706


def test_off_peak_hours_make_it_conservative_and_it_polls_every_five_minutes():
    p = AnchorPolicy()
    night = {d.resource: d for d in p.decide(23 * 3600, _view(2, 1024, 0.2, 100))}
    assert night["ram"].target == 1024 - int(128 * 0.8)
    assert p.decide(23 * 3600 + 60, _view(2, 1024, 1.9, 100)) == []  # the next poll is 300 s later
    assert p.decide(23 * 3600 + 300, _view(2, 1024, 1.9, 100))


def test_a_scale_up_past_the_tier_maximum_is_skipped_not_clamped():
    p = AnchorPolicy()
    view = ContainerView("101", Allocation(7, 1024), [sample(0, 7, 7.0)], Limits(max_cores=8))
    cpu = next(d for d in p.decide(12 * 3600, [HostView("pve1", 32, 65536, {"101": view})]) if d.resource == "cpu")
    assert cpu.action == "hold" and "max" in cpu.reason


def test_host_reserve_but_not_other_allocations_bound_its_scale_ups():
    """As published: available = host total minus the reserve (10 % of cores, 2048 MB); allocations are not subtracted."""
    p = AnchorPolicy()
    cpu = next(d for d in p.decide(12 * 3600, _view(2, 1024, 1.9, 300, host_cores=2)) if d.resource == "cpu")
    assert cpu.action == "hold" and cpu.reason.startswith("host capacity")
