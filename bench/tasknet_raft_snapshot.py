"""Task network Raft: a new validator catching up from the log vs from a snapshot, and the log on disk.

Three validators (RaftCore over RaftStore: every persist appended and fsynced, as the node actor
does) commit `--entries` ratification entries shaped like the node's (`{proposal_id, channel, by}`,
ids of 64 hex characters), proposed in batches of 100 and persisted once per batch. Two runs, same
entries and seeds:
  * log (the peer): `raft_snapshot_entries` off: the log keeps every entry;
  * snapshot: each validator compacts once `--snapshot-entries` entries were applied past its last
    snapshot (its data: the ratified index, as NodeCore writes it).
Then a fourth node joins as a learner (empty disk) and the leader replicates to it until it holds
everything committed: from the log in 64-entry append_entries, or by InstallSnapshot (64 KiB chunks)
plus the entries after the snapshot. Measured for the catch-up: CPU time of the process (all four
nodes run in it; the load makes wall time noisy, so CPU time is the figure), wall time, messages and
bytes sent to the newcomer (the JSON of each message, as the Ray call carries it). Measured for the
disk: the leader's raft.log plus its snapshot files.

Usage: python bench/tasknet_raft_snapshot.py [--entries 10000] [--snapshot-entries 1000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.tasknet.raft import LEADER, RaftCore, RaftMessage
from actors.tasknet.raftstore import RaftStore

VOTERS = ["a", "b", "c"]


class Cluster:
    def __init__(self, root: Path, snapshot_entries: int | None) -> None:
        self.root, self.snapshot_entries = root, snapshot_entries
        self.stores: dict[str, RaftStore] = {}
        self.nodes: dict[str, RaftCore] = {}
        for n, i in enumerate(VOTERS):
            self.add(i, seed=n)
        self.to_new: list[RaftMessage] = []

    def add(self, i: str, seed: int) -> RaftCore:
        (self.root / i).mkdir(parents=True)
        self.stores[i] = RaftStore(self.root / i)
        self.nodes[i] = RaftCore(i, VOTERS, hard=self.stores[i].load(), seed=seed)
        return self.nodes[i]

    def flush(self, i: str) -> None:
        node = self.nodes[i]
        self.stores[i].persist(node)
        node.take_snapshot()
        node.take_committed()
        if self.snapshot_entries and node.last_applied - node.snap_index() >= self.snapshot_entries:
            self.stores[i].compact(node, node.last_applied, {"ratified_index": node.last_applied})

    def deliver(self) -> None:
        moved = True
        while moved:
            moved = False
            for i in list(self.nodes):
                self.flush(i)
                for msg in self.nodes[i].take_messages():
                    moved = True
                    if msg["to"] == "d":
                        self.to_new.append(msg)
                    self.nodes[msg["to"]].step(msg)

    def tick(self, rounds: int) -> None:
        for _ in range(rounds):
            for node in self.nodes.values():
                node.tick()
            self.deliver()

    def leader(self) -> RaftCore:
        (leader,) = [n for n in self.nodes.values() if n.role == LEADER]
        return leader


def entry(n: int) -> dict[str, Any]:
    pid = hashlib.sha256(b"proposal %d" % n).hexdigest()
    return {"proposal_id": pid, "channel": "general", "by": hashlib.sha256(b"a").hexdigest()}


def run(entries: int, snapshot_entries: int | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(Path(tmp), snapshot_entries)
        cluster.tick(60)
        for start in range(0, entries, 100):
            leader = cluster.leader()
            for n in range(start, min(entries, start + 100)):
                leader.propose(entry(n))
            cluster.deliver()
        leader = cluster.leader()
        disk = sum(p.stat().st_size for p in (Path(tmp) / leader.id).iterdir())
        log_bytes = (Path(tmp) / leader.id / "raft.log").stat().st_size
        newcomer = cluster.add("d", seed=9)
        cpu, wall = time.process_time(), time.perf_counter()
        leader._caught_up("d")  # what propose_change does first: replicate to it as a learner
        rounds = 0
        while newcomer.last_index() < leader.commit_index:
            cluster.deliver()
            cluster.tick(1)
            rounds += 1
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        sent = cluster.to_new
        return {
            "committed": leader.commit_index,
            "catch_up_cpu_s": cpu,
            "catch_up_wall_s": wall,
            "messages": len(sent),
            "bytes": sum(len(json.dumps(m, separators=(",", ":"))) for m in sent),
            "snapshots_sent": sum(1 for m in sent if m["type"] == "install_snapshot"),
            "newcomer_snapshot_index": newcomer.snap_index(),
            "leader_disk_bytes": disk,
            "leader_log_bytes": log_bytes,
            "leader_snapshot_index": leader.snap_index(),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--snapshot-entries", type=int, default=1_000)
    args = parser.parse_args()
    load = os.getloadavg()
    plain = run(args.entries, None)
    snap = run(args.entries, args.snapshot_entries)
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (at start); {os.getloadavg()[0]:.2f} (at end)")
    print(json.dumps({"log": plain, "snapshot": snap}, indent=1))
    print(
        f"catch-up at {plain['committed']} committed entries: CPU {plain['catch_up_cpu_s'] * 1000:.0f} ms from the log "
        f"vs {snap['catch_up_cpu_s'] * 1000:.0f} ms from a snapshot "
        f"({plain['catch_up_cpu_s'] / snap['catch_up_cpu_s']:.1f}x); sent {plain['bytes']:,} vs {snap['bytes']:,} bytes "
        f"({plain['bytes'] / snap['bytes']:.1f}x), {plain['messages']} vs {snap['messages']} messages"
    )
    print(
        f"leader's Raft files: {plain['leader_disk_bytes']:,} bytes without compaction vs "
        f"{snap['leader_disk_bytes']:,} with ({plain['leader_disk_bytes'] / snap['leader_disk_bytes']:.1f}x)"
    )


if __name__ == "__main__":
    main()
