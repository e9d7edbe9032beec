"""Cost of durable actor state (rayfleet.durable) per write, against an in-memory actor.

Three named Ray actors of the same shape, each holding a ``str -> JSON`` map and answering
``set(key, value)``: one keeps it in a dict (the peer: what every actor did before), one in
a DurableMap over SQLite (WAL, synchronous=FULL), one in a DurableMap over PostgreSQL on
loopback. Each is called sequentially ``--writes`` times from the driver, as a replica
would, and the round trip of each acknowledged write is timed. Printed: p50/p99 per store
and the ratio of each durable p50 to the in-memory p50. Then each durable actor is killed
and restarted, and the bench checks every acknowledged key came back (and times the replay).

Usage: python bench/durable.py [--writes 2000] [--postgres postgresql://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ray  # noqa: E402

from rayfleet.durable import DurableMap, open_store  # noqa: E402


class MemoryMap:
    def __init__(self, dsn: str, stream: str) -> None:
        self.values: dict[str, Any] = {}

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value

    def keys(self) -> list[str]:
        return list(self.values)


class DurableActor:
    def __init__(self, dsn: str, stream: str) -> None:
        started = time.perf_counter()
        self.map = DurableMap(open_store(dsn), stream)
        self.open_seconds = time.perf_counter() - started

    def set(self, key: str, value: Any) -> None:
        self.map.set(key, value)

    def keys(self) -> list[str]:
        return [k for k, _ in self.map.items()]

    def opened_in(self) -> float:
        return self.open_seconds


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(handle: Any, writes: int) -> list[float]:
    times = []
    for i in range(writes):
        started = time.perf_counter()
        ray.get(handle.set.remote(f"k{i}", {"n": i, "reason": "bench"}))
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="durable-bench-"))
    stores = {
        "memory": (MemoryMap, ""),
        "sqlite": (DurableActor, f"sqlite:///{folder}/bench.sqlite3"),
        "postgres": (DurableActor, args.postgres),
    }
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    stream = f"bench-{uuid.uuid4().hex}"
    results: dict[str, list[float]] = {}
    for name, (cls, dsn) in stores.items():
        actor = ray.remote(cls).options(num_cpus=0.01, max_restarts=1).remote(dsn, stream)
        measure(actor, 50)  # warm-up: connection, tables, the actor's first call
        results[name] = measure(actor, args.writes)
        if cls is DurableActor:
            ray.kill(actor, no_restart=False)
            again = ray.remote(cls).options(num_cpus=0.01).remote(dsn, stream)
            kept = set(ray.get(again.keys.remote()))
            missing = [f"k{i}" for i in range(args.writes) if f"k{i}" not in kept]
            print(
                f"{name}: after a kill, {len(missing)} of {args.writes} acknowledged writes missing; "
                f"reopened in {ray.get(again.opened_in.remote()) * 1000:.1f} ms"
            )
    base = statistics.median(results["memory"])
    print(f"\n{'store':10} {'p50 ms':>8} {'p99 ms':>8} {'p50 / in-memory':>16}")
    for name, times in results.items():
        p50 = statistics.median(times)
        print(f"{name:10} {p50:8.3f} {percentile(times, 0.99):8.3f} {p50 / base:16.2f}")
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
