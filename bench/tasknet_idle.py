"""Idle cost and leader failover of a 3-node task network on a private Ray instance.

Starts the node actors as `deployments/tasknet` does (config/tasknet.yaml, a throw-away data
folder, no LLM gateway), waits until a leader is elected and the network is quiet, then reads each
node actor's process CPU from /proc over a window in which nobody sends a request. Beside it, the
same window's CPU of a bare idle actor on the same Ray (the floor a Ray worker costs doing nothing).
Then the failover: the leader is cut off (every link to it blocked, as the failover tests do) and
the time until another node leads in a later term is taken; the links are healed and the network
settles before the next round.

    python bench/tasknet_idle.py [--window 30] [--settle 5] [--failovers 9] [--no-webrtc] [--set KEY=VALUE]

Prints CPU seconds per minute per node, their sum, the floor, the Raft terms started during the idle
window (each one an election nobody caused), the failover times (median, min, max) and the load
average at the start and end. The "before" figures of the README come from this
script run on the tree before the change (it imports the tree it is in).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from actors.tasknet.node_actor import TaskNode  # noqa: E402
from actors.tasknet.raft import LEADER  # noqa: E402
from deployments.tasknet.config import TasknetConfig  # noqa: E402
from deployments.tasknet.network import Network  # noqa: E402
from rayfleet.state import call  # noqa: E402
from rayfleet.supervisor import cpu_seconds  # noqa: E402


class Floor:
    """An actor that does nothing: what a Ray worker process costs idle."""

    def pid(self) -> int:
        return os.getpid()


def config(data_dir: str, webrtc: bool, overrides: list[str]) -> TasknetConfig:
    """config/tasknet.yaml with a throw-away data folder, no LLM gateway, and `key=value` overrides."""
    raw: dict[str, Any] = yaml.safe_load((ROOT / "config/tasknet.yaml").read_text())
    raw.update({"data_dir": data_dir, "llm": {**raw.get("llm", {}), "base_url": None}})
    raw["webrtc"] = {**raw.get("webrtc", {}), "enabled": webrtc}
    for override in overrides:
        key, _, value = override.partition("=")
        raw[key] = yaml.safe_load(value)
    return TasknetConfig.model_validate(raw)


def pid_of(handle: Any) -> int:
    import ray

    return int(ray.get(handle.__ray_call__.remote(lambda self: os.getpid())))


async def statuses(network: Network, names: list[str]) -> dict[str, Any]:
    answers = await asyncio.gather(*(call(network.handles[n], TaskNode.raft_status) for n in names))
    return dict(zip(names, answers, strict=True))


async def wait_for(check: Any, timeout: float, what: str, pause: float = 0.005) -> Any:
    """Poll `check()` (async) until truthy; its value. Fails after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout} s")
        await asyncio.sleep(pause)


async def one_leader(network: Network) -> tuple[str, int] | None:
    """(leader, term) when every node names the same leader in the same term, else None."""
    seen = await statuses(network, list(network.handles))
    leaders = {(s.get("leader_id"), s.get("term")) for s in seen.values()}
    if len(leaders) != 1:
        return None
    leader_id, term = leaders.pop()
    names = [n for n, s in seen.items() if s["role"] == LEADER and s["node_id"] == leader_id]
    return (names[0], int(term)) if names else None


async def block(network: Network, cut: str | None) -> None:
    """Cut every link to and from `cut` (None: heal every link)."""
    others = [n for n in network.handles if n != cut]
    for name, handle in network.handles.items():
        blocked = [] if cut is None else (others if name == cut else [cut])
        await call(handle, TaskNode.set_blocked, blocked)


async def failover(network: Network) -> float:
    """Seconds from cutting the leader off until another node leads in a later term; then healed."""
    leader, term = await wait_for(lambda: one_leader(network), 60, "one leader")
    survivors = [n for n in network.handles if n != leader]

    async def successor() -> bool:
        seen = await statuses(network, survivors)
        return any(s["role"] == LEADER and s["term"] > term for s in seen.values())

    started = time.perf_counter()
    await block(network, leader)
    await wait_for(successor, 60, "a new leader")
    took = time.perf_counter() - started
    await block(network, None)
    await wait_for(lambda: one_leader(network), 60, "one leader after the heal", pause=0.05)
    return took


async def scenario(args: argparse.Namespace, data_dir: str) -> None:
    import ray

    load_start = os.getloadavg()
    network = Network(config(data_dir, args.webrtc, args.set))
    await network.ensure()
    await wait_for(lambda: one_leader(network), 60, "a leader", pause=0.05)
    floor: Any = ray.remote(num_cpus=0.01)(Floor).remote()
    pids = {n: pid_of(h) for n, h in network.handles.items()}
    floor_pid = int(ray.get(floor.pid.remote()))
    await asyncio.sleep(args.settle)  # quiet: joins, the genesis and the first Raft entries are done
    terms = {n: s["term"] for n, s in (await statuses(network, list(pids))).items()}
    before = {n: cpu_seconds(p) for n, p in pids.items()}
    floor_before = cpu_seconds(floor_pid)
    started = time.monotonic()
    await asyncio.sleep(args.window)
    window = time.monotonic() - started
    elections = max(s["term"] - terms[n] for n, s in (await statuses(network, list(pids))).items())
    per_min = {n: (cpu_seconds(p) - before[n]) * 60 / window for n, p in pids.items()}
    floor_min = (cpu_seconds(floor_pid) - floor_before) * 60 / window
    print(f"idle window {window:.1f} s (webrtc {'on' if args.webrtc else 'off'}); CPU s per minute:")
    for name, value in per_min.items():
        print(f"  {name}: {value:.2f}")
    print(f"  the three nodes: {sum(per_min.values()):.2f} s/min; a bare idle actor (floor): {floor_min:.2f} s/min")
    print(f"  Raft terms started during the window (spurious elections): {elections}")
    samples = [await failover(network) for _ in range(args.failovers)]
    if samples:
        print(
            f"failover (leader cut off -> new leader), {len(samples)} rounds: median "
            f"{statistics.median(samples) * 1000:.0f} ms, min {min(samples) * 1000:.0f} ms, "
            f"max {max(samples) * 1000:.0f} ms; all: {' '.join(f'{s * 1000:.0f}' for s in samples)}"
        )
    print(f"load average: start {load_start[0]:.2f}, end {os.getloadavg()[0]:.2f}")
    handles: list[Any] = list(network.handles.values())
    await network.stop()
    for handle in handles:
        ray.kill(handle, no_restart=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=30.0, help="seconds of idle time measured")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to wait after the leader is elected")
    parser.add_argument("--failovers", type=int, default=9, help="leader cut-off rounds")
    parser.add_argument("--no-webrtc", dest="webrtc", action="store_false", help="events over Ray calls only")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting of the config")
    args = parser.parse_args()
    import ray

    tmp = tempfile.mkdtemp(prefix="tasknet-idle-")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=os.path.join(tmp, "ray"),
        namespace="rayfleet",
        logging_level=logging.ERROR,
    )
    try:
        asyncio.run(scenario(args, os.path.join(tmp, "data")))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
