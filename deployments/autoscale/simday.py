"""One simulated day of load, driven by a scaling policy (the benchmark's and the notebook's engine).

Two pve-sim nodes run in this process with a stepped clock. Every interval each
running container is sampled with the monitor's own command line
(`pct exec <id> -- cat /proc/stat ...`, parsed by the monitor's parser), the
policy decides from the ring-buffered history, and its decisions are applied
with `pct set` on the simulated node, which charges the old allocation up to
that moment. What the containers really needed (seconds above 90 % CPU, at
OOM) and what they were given (core- and MB-seconds) come from the simulator's
ground truth, not from what the monitor saw.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from actors.autoscale.capacity import read_status, status_argv
from actors.autoscale.history import RingHistory
from actors.autoscale.policy import Allocation, ContainerView, Decision, HostView, Limits, Policy
from actors.autoscale.sampling import parse_counters, sample_argv
from rayfleet.ssh import CommandResult
from sims.pve import Host, make_host
from sims.pve.load import DAY, Curve, LoadModel, ManualClock
from sims.pve.scenario import day_scenario, install, size_node


@dataclass
class DayResult:
    policy: str
    stats: dict[str, dict[str, float]]
    kinds: dict[str, str]
    decisions: list[Decision]
    timeline: list[dict[str, object]] = field(default_factory=list)

    def totals(self) -> dict[str, float]:
        s = self.stats.values()
        return {
            "slo_minutes": sum(x["violation_s"] for x in s) / 60,
            "cpu_over_90_minutes": sum(x["over_slo_s"] for x in s) / 60,
            "oom_minutes": sum(x["oom_s"] for x in s) / 60,
            "core_minutes": sum(x["core_s"] for x in s) / 60,
            "mb_minutes": sum(x["mb_s"] for x in s) / 60,
            "actions": sum(1 for d in self.decisions if d.action == "set"),
        }


class SimDay:
    """The nodes, their load, and the loop."""

    def __init__(
        self, workdir: Path, seed: int = 7, limits: Limits | None = None, record: bool = False, days: float = 1.0
    ) -> None:
        self.duration = days * DAY
        self.clock = ManualClock(0.0)
        self.t = 0.0
        self.record = record
        self.timeline: list[dict[str, object]] = []
        self.decisions: list[Decision] = []
        self.limits = limits or Limits()
        self.hosts: dict[str, Host] = {}
        self.kinds: dict[str, str] = {}
        self.history = RingHistory(maxlen=240)
        self.capacity: dict[str, tuple[int, int]] = {}
        for node, containers in day_scenario(seed).items():
            host = make_host(workdir / node, node=node)
            size_node(host.model)
            install(host.model, containers)
            curves = {vmid: Curve.from_dict(spec["curve"], seed) for vmid, spec in containers.items()}
            host.load_file.model = LoadModel(curves, self.clock)
            self.hosts[node] = host
            self.kinds.update({vmid: str(spec["curve"]["kind"]) for vmid, spec in containers.items()})

    def views(self) -> list[HostView]:
        out = []
        for node, host in self.hosts.items():
            containers = {}
            for vmid, ct in host.model.containers.items():
                alloc = Allocation(int(ct["config"]["cores"]), int(ct["config"]["memory"]))
                containers[vmid] = ContainerView(vmid, alloc, self.history.samples(vmid), self.limits)
            cores, memory_mb = self.capacity[node]
            out.append(HostView(node, cores, memory_mb, containers))
        return out

    async def read_capacity(self) -> None:
        """Each node's CPUs and memory as the monitor reads them (`pvesh get /nodes/<node>/status`)."""
        for node, host in self.hosts.items():
            argv = status_argv(node)
            result = await host.execute(shlex.join(argv))
            errors: list[str] = []
            size = read_status(node, CommandResult(tuple(argv), result.stdout, result.stderr, result.rc), errors)
            if size is None:
                raise RuntimeError("; ".join(errors))
            self.capacity[node] = size

    async def sample(self, record: list[dict[str, object]] | None) -> None:
        now = self.clock.t
        for node, host in self.hosts.items():
            for vmid in sorted(host.model.containers, key=int):
                result = await host.execute(shlex.join(sample_argv(vmid)))
                sample = self.history.observe(vmid, parse_counters(result.stdout, now))
                if sample is not None and record is not None:
                    record.append({"host": node, "vmid": vmid, "kind": self.kinds[vmid], **sample.as_dict()})

    async def apply(self, decision: Decision) -> None:
        option = "--cores" if decision.resource == "cpu" else "--memory"
        result = await self.hosts[decision.host].execute(f"pct set {decision.vmid} {option} {decision.target}")
        decision.applied = result.rc == 0
        if not decision.applied:
            decision.error = result.stderr.strip()

    async def advance(self, policy: Policy, until: float, interval: float = 60.0) -> None:
        """Run cycles (sample, decide, apply) up to simulated time `until`; resumable."""
        end = min(self.duration, until)
        if not self.capacity:
            await self.read_capacity()
        while self.t <= end:
            self.clock.t = self.t
            await self.sample(self.timeline if self.record else None)
            for decision in policy.decide(self.t, self.views()):
                if decision.action == "set":
                    await self.apply(decision)
                self.decisions.append(decision)
            self.t += interval

    def finish(self, policy: Policy, end: float) -> DayResult:
        """Charge every container up to `end` and collect the ground truth."""
        self.clock.t = min(self.duration, end)
        stats = {}
        for host in self.hosts.values():
            load = host.load_file.model
            assert load is not None
            for vmid, ct in host.model.containers.items():
                load.advance(vmid, ct["config"])
                stats[vmid] = load.stats(vmid)
        return DayResult(policy.name, stats, dict(self.kinds), self.decisions, self.timeline)

    async def run(self, policy: Policy, interval: float = 60.0, hours: float = 24.0) -> DayResult:
        await self.advance(policy, hours * 3600, interval)
        return self.finish(policy, hours * 3600)


async def simulate_day(
    policy: Policy, workdir: Path, seed: int = 7, interval: float = 60.0, hours: float = 24.0
) -> DayResult:
    return await SimDay(workdir, seed, days=max(1.0, hours / 24)).run(policy, interval, hours)
