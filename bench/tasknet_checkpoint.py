"""Task network checkpoints: cold start, late-event cost and memory, with and without a checkpoint.

For each size N the bench signs a history of N events among three validators (each task
is created, claimed, submitted and accepted: 4 events, real SP moving), then:
  * node A (the peer: no checkpoint) has the whole history in its events.log;
  * validators B and C fold it, take the checkpoint due at the horizon that leaves the last
    `--tail` events after it, sign it, exchange signatures (2 of 3: certified) and compact
    their events.log to the tail.
Each cold start runs in a fresh process (`--cold DIR`) that loads the node from its files
(every signature verified, the log folded, or the checkpoint's hash checked and the tail
folded), reports the time and its resident memory, then receives one late event: a
participant who joined at the very start signs its next event stamped just after its join,
so it lands before nearly the whole history. A (no checkpoint) refolds everything; B refolds
only from the checkpoint (the event is below the certified horizon: it is folded after it).
Both processes must agree on the state without the late event (the checkpoint is exact).

Usage: python bench/tasknet_checkpoint.py [--sizes 20000 100000] [--tail 1000] [--workload tasks|skills]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.tasknet.events import make_event
from actors.tasknet.node import NodeCore
from actors.tasknet.records import Event
from actors.tasknet.wal import RecordLog
from tests.actors.tasknet.netsim import ManualClock, checkpoint_round, comparable, make_network, sync

SETTLE_MS = 1000


def rss_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def history(nodes: list[NodeCore], size: int, clock: ManualClock, workload: str) -> list[Event]:
    """`size` signed events 1 ms apart. `tasks`: tasks created, claimed, submitted and accepted in turn
    (every completed task stays in the state: it grows with the history); `skills`: the validators
    rewrite their skills (the state keeps one record per node: it does not grow)."""
    tops = {n.node_id: list(n.log.top(n.node_id)) for n in nodes}
    out: list[Event] = []

    def sign(node: NodeCore, type_: str, payload: dict[str, Any]) -> Event:
        clock.advance(0.001)
        seq, prev, _ = tops[node.node_id]
        event = make_event(node.identity, seq + 1, prev, [clock.ms, 0], "general", type_, payload)
        tops[node.node_id] = [seq + 1, event["id"], event["hlc"]]
        out.append(event)
        return event

    i = 0
    while workload == "skills" and len(out) < size:
        sign(nodes[i % 3], "skills_set", {"skills": [f"skill {i % 50}", "python"], "bio": f"update {i}"})
        i += 1
    while len(out) < size:
        creator, worker = nodes[i % 3], nodes[(i + 1) % 3]
        created = sign(creator, "task_create", {"title": f"task {i}", "reward": 5})
        task = {"task_id": created["id"][:16]}
        sign(worker, "task_claim", task)
        sign(worker, "task_complete", task)
        sign(creator, "task_accept", task)
        i += 1
    return out[:size]


def build(root: Path, size: int, tail: int, workload: str) -> tuple[Event, str, int]:
    """Write A's (full) and B's (checkpointed) data dirs; the late event, the expected digest, the horizon."""
    clock = ManualClock()
    dirs = [root / "a", root / "b", root / "c"]
    nodes = make_network(3, faucet=10**9, data_dirs=dirs, clock=clock)
    latecomer = NodeCore("late", None, genesis_author=nodes[0].node_id, now_ms=clock)
    latecomer.receive([e for n in nodes for e in n.log.all_events()])
    joined, _ = latecomer.submit(
        "join", {"name": "late", "ring_key": latecomer.ring_key.public, "seal_key": latecomer.seal_key.public}
    )
    for node in nodes:
        node.receive([joined])
    sync(nodes)
    events = history(nodes, size, clock, workload)
    a, b, c = nodes
    a.events_file.append(events)  # A only stores the history (it folds it at its cold start)
    started = time.perf_counter()
    for node in (b, c):
        for i in range(0, len(events), 5000):
            node.receive(events[i : i + 5000])
    fold_s = (time.perf_counter() - started) / 2
    print(f"  {size:,} events: signed, and folded by each validator at {size / fold_s:,.0f} events/s")
    horizon = events[-tail]["hlc"][0]
    clock.ms = horizon + SETTLE_MS
    started = time.perf_counter()
    checkpoint_round([b, c], interval_ms=1, settle_ms=SETTLE_MS)
    took = (time.perf_counter() - started) / 2
    print(f"  taking, signing and installing the checkpoint (fold, hash, write, compact): {took:.2f} s per validator")
    assert b.reducer.horizon == c.reducer.horizon == horizon, "the checkpoint was not certified"
    expected = comparable(b.state)
    late = make_event(
        latecomer.identity,
        2,
        joined["id"],
        [joined["hlc"][0] + 1, 0],
        "general",
        "skills_set",
        {"skills": ["late"], "bio": "signed long ago, delivered now"},
    )
    for node in nodes:
        node.close()
    return late, expected, horizon


def cold(data_dir: str, late_path: str) -> None:
    """Child process: load the node from its files, report time and memory, then take the late event."""
    before, _ = rss_mb()
    meta = json.loads((Path(data_dir) / "meta.json").read_text())
    started = time.perf_counter()
    node = NodeCore("n", Path(data_dir), genesis_author=meta["genesis_author"])
    start_s = time.perf_counter() - started
    rss, hwm = rss_mb()
    digest = comparable(node.state)
    late = json.loads(Path(late_path).read_text())
    folded = node.reducer.folded
    started = time.perf_counter()
    assert node.receive([late]), "the late event was not accepted"
    late_s = time.perf_counter() - started
    assert node.state["skills"][late["author"]]["skills"] == ["late"]
    print(
        json.dumps(
            {
                "start_s": start_s,
                "rss_mb": rss - before,
                "hwm_mb": hwm,
                "late_s": late_s,
                "late_folded": node.reducer.folded - folded,
                "events_in_memory": len(node.log),
                "horizon": node.reducer.horizon,
                "digest": digest,
            }
        )
    )


def child(data_dir: Path, late_path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--cold", str(data_dir), "--late", str(late_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(size: int, tail: int, workload: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tasknet-ckpt-") as tmp:
        root = Path(tmp)
        late, expected, horizon = build(root, size, tail, workload)
        late_path = root / "late.json"
        late_path.write_text(json.dumps(late))
        full, ckpt = child(root / "a", late_path), child(root / "b", late_path)
        wal_a, wal_b = (root / "a" / "events.log").stat().st_size, (root / "b" / "events.log").stat().st_size
        ckpt_bytes = (root / "b" / "checkpoint.json").stat().st_size
        records = len(RecordLog(root / "b" / "events.log").records)
    assert full["digest"] == ckpt["digest"] == expected, "checkpoint + tail is not the full fold"
    assert full["horizon"] == 0 and ckpt["horizon"] == horizon
    print(
        f"  cold start, no checkpoint (peer): {full['start_s']:.2f} s, +{full['rss_mb']:.0f} MiB RSS "
        f"({full['events_in_memory']:,} events in memory, events.log {wal_a / 1e6:.1f} MB)"
    )
    print(
        f"  cold start from the checkpoint:   {ckpt['start_s']:.2f} s, +{ckpt['rss_mb']:.0f} MiB RSS "
        f"({ckpt['events_in_memory']:,} events in memory, events.log {wal_b / 1e6:.2f} MB = {records} records, "
        f"checkpoint.json {ckpt_bytes / 1e6:.1f} MB)"
    )
    print(f"    -> {full['start_s'] / ckpt['start_s']:.1f}x faster, {full['rss_mb'] / ckpt['rss_mb']:.1f}x less memory")
    print(f"  late event, no checkpoint: {full['late_s'] * 1000:.0f} ms, {full['late_folded']:,} events refolded")
    print(
        f"  late event, checkpoint:    {ckpt['late_s'] * 1000:.1f} ms, {ckpt['late_folded']:,} events refolded"
        f"  -> {full['late_s'] / ckpt['late_s']:.0f}x cheaper"
    )
    return {"size": size, "full": full, "ckpt": ckpt}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--tail", type=int, default=1000, help="events after the checkpoint's horizon")
    parser.add_argument("--workload", choices=["tasks", "skills"], default="tasks")
    parser.add_argument("--cold", help=argparse.SUPPRESS)
    parser.add_argument("--late", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold:
        cold(args.cold, args.late)
        return
    results = []
    for size in args.sizes:
        print(f"history of {size:,} events ({args.workload}), checkpoint {args.tail:,} events before the end")
        results.append(run(size, args.tail, args.workload))
    if len(results) >= 2:
        small, large = results[0], results[-1]
        span = large["size"] - small["size"]
        print("memory extrapolated to 1,000,000 events (linear in the two sizes measured; not run here):")
        for key, label in (("full", "no checkpoint"), ("ckpt", "checkpoint")):
            per = (large[key]["rss_mb"] - small[key]["rss_mb"]) / span
            rss = large[key]["rss_mb"] + per * (1_000_000 - large["size"])
            print(f"  {label}: +{rss:,.0f} MiB RSS ({per * 1024 * 1000:.0f} KiB per 1,000 events)")


if __name__ == "__main__":
    main()
