"""One simulated day, three scaling policies, the same seeds: SLO violations, cost, churn.

    python bench/autoscale.py                  # 24 h at one sample a minute, seed 7
    python bench/autoscale.py --hours 6 --seed 3

20 containers over two simulated nodes (8 daily cycles, 4 steady, 4 with
traffic spikes, 2 with a runaway process, 2 with a memory leak), all starting
at 2 cores and 1024 MB. Each policy runs the same day from the same seed:

* static: the first allocation, never changed;
* threshold: the anchor's loop (CPU%/RAM% of the newest sample against 75/30,
  1 core and 512 MB steps, no delays, no capacity check);
* model: ours (percentile forecast + trend, IsolationForest anomalies,
  hysteresis with separate up/down delays, cooldowns, host capacity).

SLO violation minutes: summed over containers, minutes above 90 % CPU demand
(demand / cores) or with memory demand above the allocation (OOM). Cost:
core-minutes and MB-minutes allocated. Churn: scaling actions applied. All
from the simulator's ground truth. Runs in-process (no cluster); it stops by
itself after the simulated hours.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from actors.autoscale.policy import ForecastPolicy, Policy, StaticPolicy, ThresholdPolicy
from deployments.autoscale.simday import DayResult, simulate_day


def _row(result: DayResult, seconds: float) -> str:
    t = result.totals()
    return (
        f"{result.policy:<10} {t['slo_minutes']:>9.0f} {t['cpu_over_90_minutes']:>9.0f} {t['oom_minutes']:>7.0f} "
        f"{t['core_minutes']:>11.0f} {t['mb_minutes'] / 1e6:>10.2f}M {t['actions']:>8} {seconds:>7.1f}s"
    )


def _by_kind(results: list[DayResult]) -> None:
    kinds = sorted(set(results[0].kinds.values()))
    print("\nSLO violation minutes by load shape:")
    print(f"{'kind':<9}" + "".join(f"{r.policy:>11}" for r in results))
    for kind in kinds:
        cells = []
        for r in results:
            cells.append(sum(s["violation_s"] for v, s in r.stats.items() if r.kinds[v] == kind) / 60)
        print(f"{kind:<9}" + "".join(f"{c:>11.0f}" for c in cells))


def _actions(results: list[DayResult]) -> None:
    print("\nscaling actions by load shape (cpu/ram):")
    kinds = sorted(set(results[0].kinds.values()))
    print(f"{'kind':<9}" + "".join(f"{r.policy:>11}" for r in results))
    for kind in kinds:
        cells = []
        for r in results:
            mine = [d for d in r.decisions if d.action == "set" and r.kinds[d.vmid] == kind]
            cells.append(f"{sum(d.resource == 'cpu' for d in mine)}/{sum(d.resource == 'ram' for d in mine)}")
        print(f"{kind:<9}" + "".join(f"{c:>11}" for c in cells))


async def main(hours: float, seed: int, interval: float) -> None:
    policies: list[Policy] = [StaticPolicy(), ThresholdPolicy(), ForecastPolicy()]
    results: list[DayResult] = []
    print(f"simulated day: {hours:g} h, sample interval {interval:g} s, seed {seed}, 20 containers on 2 nodes")
    print(
        f"{'policy':<10} {'SLO min':>9} {'CPU>90':>9} {'OOM':>7} {'core-min':>11} {'MB-min':>11} {'actions':>8} {'wall':>8}"
    )
    with tempfile.TemporaryDirectory(prefix="autoscale-bench-") as tmp:
        for policy in policies:
            started = time.perf_counter()
            result = await simulate_day(policy, Path(tmp) / policy.name, seed, interval, hours)
            results.append(result)
            print(_row(result, time.perf_counter() - started), flush=True)
    _by_kind(results)
    _actions(results)
    _static, threshold, ours = (r.totals() for r in results)
    print("\nmodel vs threshold:")
    print(f"  SLO violation minutes  {ours['slo_minutes']:.0f} vs {threshold['slo_minutes']:.0f}")
    print(f"  core-minutes           {ours['core_minutes']:.0f} vs {threshold['core_minutes']:.0f}")
    print(f"  MB-minutes             {ours['mb_minutes']:.0f} vs {threshold['mb_minutes']:.0f}")
    print(f"  scaling actions        {ours['actions']} vs {threshold['actions']}")
    flagged = sum(1 for d in results[2].decisions if d.action == "flag")
    held = sum(1 for d in results[2].decisions if d.action == "hold" and d.reason.startswith("anomaly"))
    print(f"  model: {flagged} runaway flags, {held} scale-downs held back by an anomaly")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--interval", type=float, default=60.0)
    args = parser.parse_args()
    asyncio.run(main(args.hours, args.seed, args.interval))
