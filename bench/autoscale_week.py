"""A simulated week per seed: our model, the threshold policy and the anchor's algorithm, judged on held-out seeds.

    python bench/autoscale_week.py                 # the five judging seeds, 7 days each
    python bench/autoscale_week.py --tuning        # the tuning seed(s) instead
    python bench/autoscale_week.py --days 1 --seeds 11
    python bench/autoscale_week.py --jobs 5        # one process per seed (same figures, sooner)

The seeds are fixed here, before any tuning: the policy's settings may only be
changed by looking at TUNING_SEEDS; JUDGING_SEEDS are the figures reported.
Each run is the simulated day's scenario (20 containers on two nodes, 8 daily
cycles, 4 steady, 4 spiky, 2 runaway, 2 leaking; deployments/autoscale/simday.py)
stretched over `--days`, sampled once a simulated minute, every policy from
the same seed. Ground truth from the simulator:

* SLO minutes: minutes a container spent above 90 % CPU demand over its cores,
  or with memory demand above its allocation (OOM), summed over containers;
* "excl. runaway": the same without the two runaway containers, whose 64-core
  burn violates the SLO whatever any policy gives them (the part a policy can change);
* core-minutes and MB-minutes allocated, and the scaling actions applied.

The goal: 30 % fewer SLO minutes than the threshold policy at no more
core-minutes. Runs in-process (no cluster) and stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import redirect_stdout
from pathlib import Path

from actors.autoscale.anchor import AnchorPolicy
from actors.autoscale.policy import ForecastPolicy, Policy, ThresholdPolicy
from deployments.autoscale.simday import DayResult, SimDay

TUNING_SEEDS = (7,)
JUDGING_SEEDS = (11, 23, 42, 1234, 2027)
COLUMNS = ("slo_minutes", "slo_excl_runaway", "core_minutes", "mb_minutes", "actions")


def policies() -> list[Policy]:
    return [ThresholdPolicy(), AnchorPolicy(), ForecastPolicy()]


def figures(result: DayResult) -> dict[str, float]:
    totals = result.totals()
    servable = [s for v, s in result.stats.items() if result.kinds[v] != "runaway"]
    return {
        "slo_minutes": totals["slo_minutes"],
        "slo_excl_runaway": sum(s["violation_s"] for s in servable) / 60,
        "core_minutes": totals["core_minutes"],
        "mb_minutes": totals["mb_minutes"],
        "actions": totals["actions"],
    }


def header() -> str:
    return f"{'policy':<10} {'SLO min':>9} {'excl. runaway':>14} {'core-min':>10} {'MB-min':>9} {'actions':>8}"


def row(name: str, f: dict[str, float]) -> str:
    return (
        f"{name:<10} {f['slo_minutes']:>9.0f} {f['slo_excl_runaway']:>14.0f} {f['core_minutes']:>10.0f} "
        f"{f['mb_minutes'] / 1e6:>8.2f}M {f['actions']:>8.0f}"
    )


def change(ours: float, theirs: float) -> str:
    return f"{100 * (ours - theirs) / theirs:+.1f} %" if theirs else "n/a"


async def run_seed(seed: int, days: float, tmp: Path) -> dict[str, dict[str, float]]:
    out = {}
    for policy in policies():
        started = time.perf_counter()
        result = await SimDay(tmp / f"{seed}-{policy.name}", seed, days=days).run(policy, 60.0, days * 24)
        out[policy.name] = figures(result)
        print(row(policy.name, out[policy.name]) + f"   ({time.perf_counter() - started:.0f} s)", flush=True)
    return out


def seed_in_process(seed: int, days: float) -> tuple[str, dict[str, dict[str, float]]]:
    """One seed in a worker process: its table as text, and its figures."""
    out = io.StringIO()
    with redirect_stdout(out), tempfile.TemporaryDirectory(prefix="autoscale-week-") as tmp:
        print(f"\nseed {seed}\n{header()}")
        figures_ = asyncio.run(run_seed(seed, days, Path(tmp)))
    return out.getvalue(), figures_


def main(seeds: tuple[int, ...], days: float, jobs: int) -> None:
    print(f"simulated days: {days:g} per seed, one sample a simulated minute, seeds {list(seeds)}")
    per_seed: list[dict[str, dict[str, float]]] = []
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for text, result in pool.map(seed_in_process, seeds, [days] * len(seeds)):
                print(text, end="", flush=True)
                per_seed.append(result)
    else:
        with tempfile.TemporaryDirectory(prefix="autoscale-week-") as tmp:
            for seed in seeds:
                print(f"\nseed {seed}\n{header()}")
                per_seed.append(asyncio.run(run_seed(seed, days, Path(tmp))))
    names = list(per_seed[0])
    mean = {n: {c: statistics.fmean(s[n][c] for s in per_seed) for c in COLUMNS} for n in names}
    print(f"\nmean over {len(seeds)} seeds\n{header()}")
    for n in names:
        print(row(n, mean[n]))
    ours, threshold, anchor = mean["model"], mean["threshold"], mean["anchor"]
    print("\nmodel vs threshold (mean):")
    for c in COLUMNS:
        print(f"  {c:<17} {change(ours[c], threshold[c])}")
    print("model vs anchor (mean):")
    for c in COLUMNS:
        print(f"  {c:<17} {change(ours[c], anchor[c])}")
    cut = 1 - ours["slo_minutes"] / threshold["slo_minutes"]
    met = cut >= 0.30 and ours["core_minutes"] <= threshold["core_minutes"]
    print(
        f"\ngoal (30 % fewer SLO minutes than threshold at no more core-minutes): "
        f"{'met' if met else 'NOT met'} ({100 * cut:.1f} % fewer, core-minutes {change(ours['core_minutes'], threshold['core_minutes'])})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=float, default=7.0)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--tuning", action="store_true", help="run the tuning seeds")
    group.add_argument("--seeds", type=int, nargs="+")
    parser.add_argument("--jobs", type=int, default=1, help="seeds run side by side, one process each")
    args = parser.parse_args()
    chosen = tuple(args.seeds) if args.seeds else TUNING_SEEDS if args.tuning else JUDGING_SEEDS
    main(chosen, args.days, args.jobs)
