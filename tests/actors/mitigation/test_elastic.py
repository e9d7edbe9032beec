"""The autoscaler's decision: sustained load only, hysteresis, cooldown, bounds, live capacity."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from actors.mitigation.elastic import Autoscaler, Decision, NodeLoad
from actors.mitigation.settings import AutoscaleSettings, FleetSettings

SETTINGS = {
    "enabled": True,
    "min_nodes": 1,
    "max_nodes": 3,
    "target_rps_per_node": 100.0,
    "scale_down_ratio": 0.5,
    "scale_up_after_s": 10.0,
    "scale_down_after_s": 30.0,
    "cooldown_s": 20.0,
}


def scaler(**more: Any) -> Autoscaler:
    return Autoscaler(AutoscaleSettings(**{**SETTINGS, **more}))


def nodes(*rps: float | None, status: str = "healthy") -> list[NodeLoad]:
    return [NodeLoad(f"node-{i + 1}", status, r) for i, r in enumerate(rps)]


def run(a: Autoscaler, start: float, end: float, loads: list[NodeLoad]) -> Decision:
    """One heartbeat a second from `start` to `end` (inclusive) with the same loads; the last decision."""
    t = start
    decision = a.step(t, loads)
    while t < end:
        t += 1.0
        decision = a.step(t, loads)
    return decision


def test_sustained_load_above_target_scales_up_by_step_after_the_window() -> None:
    a = scaler()
    assert run(a, 0, 9, nodes(150)).change == 0  # 9 s of the 10 s window
    decision = a.step(10, nodes(150))
    assert decision.change == 1
    assert "above target 100" in decision.reason
    assert decision.load_per_node == 150


def test_one_sample_spike_does_not_scale_up() -> None:
    a = scaler()
    run(a, 0, 20, nodes(50))
    assert a.step(21, nodes(100_000)).change == 0  # the average would be far above target: the window is not
    assert run(a, 22, 40, nodes(50)).change == 0


def test_load_oscillating_around_the_target_never_flaps() -> None:
    a = scaler()
    changes = [a.step(float(t), nodes(160 if t % 4 < 2 else 40)).change for t in range(0, 300)]
    assert changes == [0] * 300


def test_load_just_below_the_target_does_not_scale_down_hysteresis() -> None:
    a = scaler()
    assert run(a, 0, 100, nodes(70, 70)).change == 0  # below target, above 0.5 × target


def test_low_load_scales_down_only_after_the_longer_window() -> None:
    a = scaler()
    assert run(a, 0, 29, nodes(10, 10)).change == 0
    decision = a.step(30, nodes(10, 10))
    assert decision.change == -1
    assert "below 50" in decision.reason


def test_scale_down_is_not_taken_when_the_nodes_left_would_be_over_target() -> None:
    # 45 rps/node is under the lower threshold (50), but 3 → 2 nodes would put 67.5 each: still fine;
    # with scale_down_ratio 0.9, 85/node on 2 nodes would give 170 on one: refused
    a = scaler(scale_down_ratio=0.9)
    assert run(a, 0, 60, nodes(85, 85)).change == 0
    assert scaler().step(0, nodes(45, 45, 45)).change == 0  # no window yet
    b = scaler()
    assert run(b, 0, 30, nodes(45, 45, 45)).change == -1


def test_cooldown_after_any_change_and_window_restarts() -> None:
    a = scaler()
    assert run(a, 0, 10, nodes(150)).change == 1
    a.changed(10)
    held = run(a, 11, 29, nodes(150, 150))
    assert held.change == 0
    assert held.reason.startswith("cooldown")
    # cooldown over at 30, but the window restarted at the change: 10 s of samples needed from 11 on
    assert a.step(30, nodes(150, 150)).change == 1


def test_manual_change_sets_the_same_cooldown() -> None:
    a = scaler()
    run(a, 0, 8, nodes(150))
    a.changed(9)  # /scale by hand
    assert run(a, 9, 28, nodes(150, 150)).reason.startswith("cooldown")


def test_bounds_never_exceeded() -> None:
    a = scaler(max_nodes=2, cooldown_s=0.0)
    decision = run(a, 0, 60, nodes(500, 500))
    assert decision.change == 0
    assert "at max_nodes" in decision.reason
    b = scaler(min_nodes=2, cooldown_s=0.0)
    assert run(b, 0, 120, nodes(0, 0)).change == 0  # idle at min_nodes stays there


def test_step_is_capped_by_the_bounds() -> None:
    a = scaler(step=3, max_nodes=3)
    assert run(a, 0, 10, nodes(500)).change == 2
    b = scaler(step=3, min_nodes=2, max_nodes=4)
    assert run(b, 0, 30, nodes(1, 1, 1)).change == -1


def test_a_fleet_outside_the_bounds_is_brought_back_despite_cooldown() -> None:
    a = scaler(min_nodes=2)
    a.changed(0)
    assert a.step(1, nodes(0)) == Decision(1, "below min_nodes", 1, 1, 0.0)
    assert a.step(1, nodes(0, 0, 0, 0)).change == -1


def test_dead_and_draining_nodes_are_not_capacity() -> None:
    a = scaler()
    loads = [*nodes(150), NodeLoad("node-2", "dead", None), NodeLoad("node-3", "draining", None)]
    # one live node at 150: above target; the fleet is at max (3 nodes), so it holds and says why
    decision = run(a, 0, 10, loads)
    assert decision.live == 1
    assert decision.load_per_node == 150
    assert "at max_nodes" in decision.reason
    b = scaler(max_nodes=3)
    assert run(b, 0, 10, [*nodes(150), NodeLoad("node-2", "dead", None)]).change == 1


def test_a_gap_in_the_measurements_restarts_the_window() -> None:
    a = scaler()
    run(a, 0, 8, nodes(150))
    assert a.step(9, nodes(None)).reason == "no load measured yet on the live nodes"  # a node just replaced
    assert run(a, 10, 18, nodes(150)).change == 0
    assert a.step(20, nodes(150)).change == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"enabled": 1},
        {"min_nodes": "2"},
        {"min_nodes": 0},
        {"min_nodes": 3, "max_nodes": 2},
        {"target_rps_per_node": 0},
        {"target_rps_per_node": True},
        {"scale_down_ratio": 1.0},
        {"scale_up_after_s": 60.0, "scale_down_after_s": 30.0},
        {"cooldown_s": -1.0},
        {"step": 0},
        {"window": 5},
    ],
)
def test_bad_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        AutoscaleSettings(**{**SETTINGS, **bad})


def test_autoscale_max_nodes_cannot_exceed_the_fleet_max() -> None:
    with pytest.raises(ValidationError, match="fleet's max_nodes"):
        FleetSettings(max_nodes=2, autoscale={**SETTINGS, "max_nodes": 3})
    FleetSettings(max_nodes=2, autoscale={**SETTINGS, "enabled": False, "max_nodes": 3})
