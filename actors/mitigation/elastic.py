"""When the fleet should grow or shrink: a pure decision over the nodes' served load and a clock.

HPA-style stabilisation, on one number: the requests per second the live nodes *served*
(their frontend's requests minus the ones HAProxy denied), summed and divided by the number of
live nodes. A flood the nodes refuse does not count: adding nodes for it only wastes capacity.

- scale up by `step` when every sample of the last `scale_up_after_s` is above `target_rps_per_node`
  (a spike, or load swinging around the target, never is);
- scale down by `step` when every sample of the last `scale_down_after_s` (longer) is below
  `target × scale_down_ratio` (hysteresis), and the peak of that window spread over the nodes
  left would still be under the target (so a removal is not undone at once);
- nothing during `cooldown_s` after any change, manual or automatic; the window starts again
  after a change (the per-node figures before it were measured over another number of nodes);
- never outside [min_nodes, max_nodes]: a fleet outside them is brought back one `step` at a
  time, cooldown or not. Dead and draining nodes are not capacity.

The caller passes the time (`now`, monotonic seconds), so tests drive the clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from actors.mitigation.settings import AutoscaleSettings


@dataclass(frozen=True)
class NodeLoad:
    """One node at a heartbeat: its status and the requests per second it served since the last
    one (None until two heartbeats have been seen)."""

    node_id: str
    status: str
    served_rps: float | None


@dataclass(frozen=True)
class Decision:
    change: int  # +n nodes, -n nodes, or 0
    reason: str
    nodes: int  # nodes in the fleet when decided (dead ones included)
    live: int  # nodes counted as capacity
    load_per_node: float | None  # served requests/s per live node at this sample

    def view(self) -> dict[str, object]:
        return {
            "change": self.change,
            "reason": self.reason,
            "nodes": self.nodes,
            "live": self.live,
            "load_per_node": None if self.load_per_node is None else round(self.load_per_node, 2),
        }


class Autoscaler:
    def __init__(self, settings: AutoscaleSettings) -> None:
        self.settings = settings
        self.samples: deque[tuple[float, float]] = deque()  # (now, served rps per live node)
        self.since: float | None = None  # first sample since the last change or gap
        self.last_change: float | None = None

    def changed(self, now: float) -> None:
        """The fleet changed size (by this or by hand): cooldown from now, and a fresh window."""
        self.last_change = now
        self._reset()

    def _reset(self) -> None:
        self.samples.clear()
        self.since = None

    def step(self, now: float, loads: list[NodeLoad]) -> Decision:
        """Record this heartbeat's loads and decide."""
        s = self.settings
        total = len(loads)
        live = [n for n in loads if n.status == "healthy"]
        per_node = self._sample(now, live)

        def hold(reason: str) -> Decision:
            return Decision(0, reason, total, len(live), per_node)

        if total < s.min_nodes:
            return Decision(min(s.step, s.min_nodes - total), "below min_nodes", total, len(live), per_node)
        if total > s.max_nodes:
            return Decision(-min(s.step, total - s.max_nodes), "above max_nodes", total, len(live), per_node)
        if self.last_change is not None and now - self.last_change < s.cooldown_s:
            return hold(f"cooldown: {s.cooldown_s - (now - self.last_change):.1f}s left")
        if per_node is None or self.since is None:
            return hold("no load measured yet on the live nodes")
        target, low = s.target_rps_per_node, s.target_rps_per_node * s.scale_down_ratio
        up = self._window(now, s.scale_up_after_s)
        if up is not None and min(up) > target:
            if total >= s.max_nodes:
                return hold(f"above target {target:g} rps/node for {s.scale_up_after_s:g}s, at max_nodes")
            change = min(s.step, s.max_nodes - total)
            reason = f"above target {target:g} rps/node for {s.scale_up_after_s:g}s"
            return Decision(change, reason, total, len(live), per_node)
        down = self._window(now, s.scale_down_after_s)
        if down is not None and max(down) < low and total > s.min_nodes:
            change = min(s.step, total - s.min_nodes, len(live) - 1)
            left = len(live) - change
            if change > 0 and max(down) * len(live) / left < target:
                reason = f"below {low:g} rps/node for {s.scale_down_after_s:g}s"
                return Decision(-change, reason, total, len(live), per_node)
        return hold(f"{per_node:.1f} rps/node, target {target:g}, scale down below {low:g}")

    def _sample(self, now: float, live: list[NodeLoad]) -> float | None:
        """Served rps per live node now; a heartbeat with no measurable live node breaks the window."""
        if not live or any(n.served_rps is None for n in live):
            self._reset()
            return None
        per_node = sum(n.served_rps or 0.0 for n in live) / len(live)
        if self.since is None:
            self.since = now
        self.samples.append((now, per_node))
        horizon = now - max(self.settings.scale_up_after_s, self.settings.scale_down_after_s)
        while self.samples and self.samples[0][0] < horizon:
            self.samples.popleft()
        return per_node

    def _window(self, now: float, seconds: float) -> list[float] | None:
        """The samples of the last `seconds`, or None while the measurements do not span them."""
        if self.since is None or now - self.since < seconds:
            return None
        return [v for t, v in self.samples if t >= now - seconds]
