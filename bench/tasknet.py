"""Task network figures: apply rate, propagation, partition healing, Raft, ring proofs.

Every figure runs the project's own code: NodeCore (signed log + reducer) for the apply rate,
and the TaskNode actor class wired in-process (asyncio calls instead of Ray RPC, the same
gossip, anti-entropy and Raft code) for the network figures. Peers measured in the same run:
  * apply rate vs. bare Ed25519 verification of the same events (the cost floor),
  * propagation with push gossip vs. the anchor's design, anti-entropy pulls only
    (same 0.5 s interval here; the anchor uses 5-10 s and one peer per round).

The last figures repeat propagation and leader failover with the node actors on a private
Ray instance (real actor RPC, `ray.kill` of the leader's actor).

Usage: python bench/tasknet.py [--events 3000] [--rounds 20] [--partition-events 1000] [--no-ray]
       python bench/tasknet.py --cross-cluster --rounds 200
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.tasknet import ring
from actors.tasknet.canonical import canonical
from actors.tasknet.events import body
from actors.tasknet.identity import verify
from actors.tasknet.node import NodeCore
from actors.tasknet.raft import LEADER
from deployments.tasknet.config import TasknetConfig
from deployments.tasknet.network import Network
from rayfleet.state import local_state, reset_local_state
from tests.actors.tasknet.netsim import comparable, make_network


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def bench_apply(n: int) -> None:
    a = make_network(3, faucet=10**9)[0]
    for i in range(n):
        a.submit("task_create", {"title": f"t{i}", "reward": 1})
    events = list(a.log.chains[a.node_id])
    fresh = NodeCore("fresh", None, genesis_author=a.node_id)
    history = a.log.missing_for({}, set(), limit=10**9)
    started = time.perf_counter()
    fresh.receive(history)
    took = time.perf_counter() - started
    started = time.perf_counter()
    for e in events:
        verify(e["key"], canonical(body(e)), e["sig"])
    verify_only = time.perf_counter() - started
    assert comparable(fresh.state) == comparable(a.state)
    rate, floor = len(history) / took, len(events) / verify_only
    print(f"apply: {rate:,.0f} events/s incl. signature checks ({len(history)} events, state matches the author's)")
    print(f"  peer: bare Ed25519 verification {floor:,.0f} events/s; apply/verify ratio {rate / floor:.2f}")


async def open_network(tmp: Path, size: int, **overrides: Any) -> Network:
    settings: dict[str, Any] = {
        "nodes": [f"n{i + 1}" for i in range(size)],
        "data_dir": tmp,
        "anti_entropy_interval_s": 0.5,
        "raft_tick_s": 0.05,
        "webrtc": {"enabled": False},
        "llm": {"base_url": None},
        "network": {"faucet_sp": 10**9},
    }
    settings.update(overrides)
    network = Network(TasknetConfig.model_validate(settings))
    await network.ensure()
    for handle in network.handles.values():
        if hasattr(handle, "_instance"):  # in-process: settings of the node objects themselves
            handle._instance.settings.update(overrides.get("actor", {}))
    await converge(network, 30)
    return network


async def digests(network: Network) -> set[str]:
    return {(await h.view.remote("digest"))["result"]["digest"] for h in network.handles.values()}


async def converge(network: Network, timeout: float) -> float:
    started = time.perf_counter()
    while len(await digests(network)) != 1:
        if time.perf_counter() - started > timeout:
            raise RuntimeError("network did not converge")
        await asyncio.sleep(0.005)
    return time.perf_counter() - started


async def propagation(network: Network | list[Any], rounds: int) -> list[float]:
    """Seconds until an event created on the first node is on every other (a network or handles, origin first)."""
    handles = list(network.handles.values()) if isinstance(network, Network) else network
    origin, others = handles[0], handles[1:]
    samples = []
    for i in range(rounds):
        cursors = [(await h.wait_notifications.remote(1 << 62, 0))[0] for h in others]
        started = time.perf_counter()
        created = await origin.submit.remote("task_create", {"title": f"p{i}", "reward": 1}, "general")
        task_id = created["result"]["id"]

        async def arrive(handle: Any, cursor: int) -> None:
            while True:
                cursor, items = await handle.wait_notifications.remote(cursor, 5)
                if any(m["data"].get("task_id") == task_id for _, m in items):
                    return

        await asyncio.gather(*(arrive(h, c) for h, c in zip(others, cursors, strict=True)))
        samples.append(time.perf_counter() - started)
    return samples


async def bench_propagation(rounds: int) -> None:
    results = {}
    for label, push in (("push gossip", True), ("anti-entropy only", False)):
        with tempfile.TemporaryDirectory() as tmp, local_state():
            reset_local_state()
            network = await open_network(Path(tmp), 5, actor={"push_gossip": push})
            results[label] = await propagation(network, rounds)
            await network.stop()
            reset_local_state()
    ours, peer = statistics.median(results["push gossip"]), statistics.median(results["anti-entropy only"])
    p95 = sorted(results["push gossip"])[int(rounds * 0.95) - 1]
    print(f"propagation to all 5 nodes: median {ms(ours)}, p95 {ms(p95)} over {rounds} events")
    print(f"  peer: anti-entropy only (anchor's design) median {ms(peer)}; ratio {peer / ours:.1f}x")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def serve_network(config: TasknetConfig, port: int) -> tuple[Network, Any, Any]:
    """The deployment's app for `config` on a loopback uvicorn; its network, server and serving task."""
    import uvicorn

    from deployments.tasknet.app import create_app

    app = create_app(config)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    network: Network = app.state.component.network
    await network.ensure()
    return network, server, task


async def bench_cross_cluster(rounds: int) -> None:
    """Propagation across two clusters (3 + 2 nodes) joined only by the HTTP peer routes on loopback;
    the peer: the same five nodes as one cluster, measured in the same run."""
    from rayfleet.launcher import free_port

    base: dict[str, Any] = {
        "anti_entropy_interval_s": 0.5,
        "webrtc": {"enabled": False},
        "llm": {"base_url": None},
        "network": {"faucet_sp": 10**9},
        "peer_rate_per_s": 1000.0,
        "peer_burst": 1000.0,
    }
    port_a, port_b = free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp, local_state():
        reset_local_state()
        config_a = TasknetConfig.model_validate(
            {
                **base,
                "nodes": ["a1", "a2", "a3"],
                "data_dir": Path(tmp) / "a",
                "peers": [{"url": f"http://127.0.0.1:{port_b}/b1"}],
            }
        )
        side_a, server_a, task_a = await serve_network(config_a, port_a)
        config_b = TasknetConfig.model_validate(
            {
                **base,
                "nodes": ["b1", "b2"],
                "data_dir": Path(tmp) / "b",
                "genesis_author": side_a.ids["a1"],
                "peers": [{"url": f"http://127.0.0.1:{port_a}/a1", "node_id": side_a.ids["a1"]}],
            }
        )
        side_b, server_b, task_b = await serve_network(config_b, port_b)
        handles = [side_a.handles[n] for n in ("a2", "a1", "a3")] + [side_b.handles[n] for n in ("b1", "b2")]
        started = time.perf_counter()
        while True:
            states = [(await h.view.remote("state"))["result"] for h in handles]
            if all(len(s["global"]["nodes"]) == 5 for s in states):
                break
            if time.perf_counter() - started > 60:
                raise RuntimeError("the two clusters did not form one network")
            await asyncio.sleep(0.05)
        cross = await propagation(handles, rounds)
        for server, task in ((server_a, task_a), (server_b, task_b)):
            server.should_exit = True
            await task
        for network in (side_a, side_b):
            await network.stop()
        reset_local_state()
    with tempfile.TemporaryDirectory() as tmp, local_state():
        reset_local_state()
        network = await open_network(Path(tmp), 5)
        await propagation(network, 3)  # warm up as the cross-cluster run did while the clusters joined
        one = await propagation(network, rounds)
        await network.stop()
        reset_local_state()
    p50, p99 = statistics.median(cross), percentile(cross, 0.99)
    print(f"cross-cluster propagation to all 5 nodes (3 + 2, HTTP peer links on loopback, origin a2, {rounds} events):")
    print(f"  p50 {ms(p50)}, p99 {ms(p99)}, max {ms(max(cross))}")
    peer50, peer99 = statistics.median(one), percentile(one, 0.99)
    print(f"  peer: the same 5 nodes in one cluster p50 {ms(peer50)}, p99 {ms(peer99)}; ratio p50 {p50 / peer50:.1f}x")


async def bench_partition(events: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, local_state():
        reset_local_state()
        network = await open_network(Path(tmp), 5)
        names = list(network.handles)
        left, right = names[:2], names[2:]
        for n in left:
            await network.handles[n].set_blocked.remote(right)
        for n in right:
            await network.handles[n].set_blocked.remote(left)
        for side in (left[0], right[0]):
            core = network.handles[side]._instance.core
            for i in range(events):
                core.submit("task_create", {"title": f"{side}-{i}", "reward": 1})
        await asyncio.sleep(1.5)
        assert len(await digests(network)) == 2, "the partition did not hold"
        started = time.perf_counter()
        for handle in network.handles.values():
            await handle.set_blocked.remote([])
        took = await converge(network, 120)
        assert time.perf_counter() - started >= took
        print(f"partition 2|3 healed: {events} events per side converged on all 5 nodes in {ms(took)}")
        await network.stop()
        reset_local_state()


async def bench_raft(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, local_state():
        reset_local_state()
        network = await open_network(Path(tmp), 5)
        nodes = [h._instance for h in network.handles.values()]

        async def leader(exclude: Any = None, timeout: float = 30) -> Any:
            started = time.perf_counter()
            while time.perf_counter() - started < timeout:
                for n in nodes:
                    if (
                        n is not exclude
                        and n.core.raft
                        and n.core.raft.role == LEADER
                        and n.core.raft.leader_id == n.core.node_id
                    ):
                        return n
                await asyncio.sleep(0.005)
            raise RuntimeError("no leader")

        boss = await leader()
        samples = []
        for i in range(rounds):
            started = time.perf_counter()
            index = boss.core.raft.propose({"bench": i})
            await boss._flush_raft()
            while boss.core.raft.commit_index < index:
                await asyncio.sleep(0.001)
            samples.append(time.perf_counter() - started)
        print(f"Raft commit latency (5 validators): median {ms(statistics.median(samples))} over {rounds} commands")
        old_term = boss.core.raft.term
        killed = time.perf_counter()
        await boss.tasks.stop()
        for n in nodes:
            if n is not boss:
                await n.set_blocked([boss.core.name])
        successor = await leader(exclude=boss)
        print(
            f"leader killed: new leader elected in {ms(time.perf_counter() - killed)} "
            f"(term {old_term} -> {successor.core.raft.term}; election timeout 0.5-1.0 s at 50 ms ticks)"
        )
        await network.stop()
        reset_local_state()


async def ray_scenario(data_dir: str, rounds: int) -> None:
    """5 node actors on a private Ray instance: propagation and leader failover with real actor kills."""
    import ray

    network = await open_network(Path(data_dir), 5)
    samples = await propagation(network, rounds)
    print(
        f"[ray actors] propagation to all 5 nodes: median {ms(statistics.median(samples))}, "
        f"max {ms(max(samples))} over {rounds} events"
    )
    started = time.perf_counter()
    while True:
        statuses = {n: await h.raft_status.remote() for n, h in network.handles.items()}
        leaders = [n for n, st in statuses.items() if st["role"] == LEADER]
        if leaders:
            break
        assert time.perf_counter() - started < 30, "no leader elected"
        await asyncio.sleep(0.05)
    leader = leaders[0]
    term = statuses[leader]["term"]
    ray.kill(network.handles[leader], no_restart=True)
    killed = time.perf_counter()
    survivors = {n: h for n, h in network.handles.items() if n != leader}
    while True:
        roles = [await h.raft_status.remote() for h in survivors.values()]
        if any(r["role"] == LEADER and r["term"] > term for r in roles):
            break
        assert time.perf_counter() - killed < 30, "no new leader"
        await asyncio.sleep(0.005)
    print(f"[ray actors] leader actor killed (ray.kill): new leader in {ms(time.perf_counter() - killed)}")
    for handle in survivors.values():
        ray.kill(handle, no_restart=True)


def bench_ray(rounds: int) -> None:
    import ray

    tmp = tempfile.mkdtemp(prefix="tasknet-bench-ray-")
    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=f"{tmp}/ray", namespace="rayfleet", logging_level="ERROR")
    try:
        asyncio.run(ray_scenario(f"{tmp}/data", rounds))
    finally:
        ray.shutdown()


def _ring_times(size: int) -> tuple[float, float]:
    keys = [ring.RingKey.from_seed(i.to_bytes(4, "big") * 8) for i in range(size)]
    members = [k.public for k in keys]
    started = time.perf_counter()
    signature = ring.sign(keys[size // 2], members, b"proposal", b"yes")
    signed = time.perf_counter() - started
    started = time.perf_counter()
    assert ring.verify(members, b"proposal", b"yes", signature)
    return signed, time.perf_counter() - started


def bench_ring() -> None:
    """Anonymous votes by ring size; the peer is a public vote's key-image proof (a ring of one)."""
    one_signed, one_verified = _ring_times(1)
    print(f"public vote key-image proof (ring of 1): generate {ms(one_signed)}, verify {ms(one_verified)}")
    for size in (10, 100, 1000):
        signed, verified = _ring_times(size)
        print(
            f"ring proof (LSAG, secp256k1), {size} members: generate {ms(signed)}, verify {ms(verified)}"
            f" ({verified / one_verified:.0f}x the public vote's proof)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--partition-events", type=int, default=1000)
    parser.add_argument("--no-ray", action="store_true", help="skip the figures on a private Ray instance")
    parser.add_argument("--only-ring", action="store_true", help="only the ring proof figures")
    parser.add_argument(
        "--cross-cluster", action="store_true", help="only propagation across two clusters peered over HTTP"
    )
    args = parser.parse_args()
    if args.only_ring:
        bench_ring()
        return
    if args.cross_cluster:
        asyncio.run(bench_cross_cluster(args.rounds))
        return
    bench_apply(args.events)
    asyncio.run(bench_propagation(args.rounds))
    asyncio.run(bench_partition(args.partition_events))
    asyncio.run(bench_raft(args.rounds))
    bench_ring()
    if not args.no_ray:
        bench_ray(args.rounds)


if __name__ == "__main__":
    main()
