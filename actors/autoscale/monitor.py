"""The monitor actor: one per host, sampling every running container each interval over pooled SSH.

Per container, one `pct exec <id> -- cat /proc/stat /proc/meminfo ...` and one
`df -P /` per interval. Samples go to a ring buffer per container (what the
scaling model reads) and, when a path is set, to a DuckDB table trimmed to the
newest `retention_samples` rows per container (what the notebook analyses).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from pathlib import Path
from typing import Any

from rayfleet.logs import get_logger
from rayfleet.ssh import SSHHost, SSHPool
from rayfleet.tasks import BackgroundTasks

from .capacity import KINDS, NodeCapacity, guests_argv, read_guests, read_status, status_argv
from .history import RingHistory
from .sampling import ParseError, disk_argv, parse_counters, parse_df, sample_argv

log = get_logger("autoscale")


def parse_running(pct_list: str) -> list[str]:
    out = []
    for line in pct_list.splitlines()[1:]:
        words = line.split()
        if (
            len(words) >= 2
            and words[0].isascii()
            and words[0].isdigit()
            and len(words[0]) <= 12
            and words[1] == "running"
        ):
            out.append(words[0])
    return out


class SampleStore:
    """DuckDB table `samples`, bounded per container."""

    def __init__(self, path: str, retention: int) -> None:
        import duckdb

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.db = duckdb.connect(path)
        self.retention = retention
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS samples (host VARCHAR, vmid VARCHAR, t DOUBLE, cores INTEGER, cpu_pct DOUBLE,"
            " cpu_cores_used DOUBLE, memory_mb DOUBLE, memory_used_mb DOUBLE, swap_used_mb DOUBLE, oom_kills INTEGER,"
            " io_read_bps DOUBLE, io_write_bps DOUBLE, rx_bps DOUBLE, tx_bps DOUBLE, disk_pct DOUBLE)"
        )
        self.writes = 0

    def add(self, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        self.db.executemany("INSERT INTO samples VALUES (" + ",".join("?" * 15) + ")", rows)
        self.writes += 1
        if self.writes % 20 == 0:
            self.db.execute(
                "DELETE FROM samples WHERE (vmid, t) IN (SELECT vmid, t FROM (SELECT vmid, t, row_number() OVER"
                " (PARTITION BY vmid ORDER BY t DESC) AS n FROM samples) WHERE n > ?)",
                [self.retention],
            )

    def close(self) -> None:
        self.db.close()


class MonitorActor:
    def __init__(
        self,
        host: str,
        ssh: SSHHost,
        interval: float = 5.0,
        history_samples: int = 720,
        duckdb_path: str | None = None,
        retention_samples: int = 20_000,
        command_timeout: float = 30.0,
        capacity_refresh: float = 60.0,
        disk_interval: float = 60.0,
    ) -> None:
        self.host = host
        self.disk_interval = disk_interval
        self.capacity_refresh = capacity_refresh
        self._hardware: dict[str, tuple[int, int, float]] = {}  # node -> (CPUs, memory MB, read at)
        self.ssh = ssh
        self.interval = interval
        self.timeout = command_timeout
        self.pool = SSHPool()
        self.history = RingHistory(history_samples)
        self.store = SampleStore(duckdb_path, retention_samples) if duckdb_path else None
        self.disk: dict[str, float] = {}
        self._disk_at: dict[str, float] = {}  # vmid -> when its disk was last asked for
        self.cycles = 0
        self.errors: list[str] = []
        self._tasks = BackgroundTasks("autoscale")
        self._started = False

    async def start(self) -> bool:
        if not self._started:
            self._started = True
            self._tasks.every(self.interval, self.cycle, name=f"monitor-{self.host}")
        return True

    async def _one(self, vmid: str, now: float) -> tuple[Any, ...] | None:
        runs = [self.pool.run(self.host, self.ssh, sample_argv(vmid), self.timeout)]
        if now - self._disk_at.get(vmid, float("-inf")) >= self.disk_interval:
            # a root file system fills over minutes, not seconds: `df` every sample doubled the commands
            self._disk_at[vmid] = now
            runs.append(self.pool.run(self.host, self.ssh, disk_argv(vmid), self.timeout))
        usage, *disk = await asyncio.gather(*runs)
        if disk and disk[0].ok:
            pct = parse_df(disk[0].stdout)
            if pct is not None:
                self.disk[vmid] = pct
        if not usage.ok:
            self._error(f"{vmid}: {usage.stderr.strip()[:200]}")
            return None
        try:
            sample = self.history.observe(vmid, parse_counters(usage.stdout, now))
        except ParseError as exc:
            self._error(f"{vmid}: {exc}")
            return None
        if sample is None:
            return None
        return (self.host, vmid, *sample.as_dict().values(), self.disk.get(vmid))

    def _error(self, text: str) -> None:
        self.errors = [*self.errors[-49:], text]

    async def cycle(self) -> int:
        """Sample every running container once; the number of samples recorded."""
        listing = await self.pool.run(self.host, self.ssh, ["pct", "list"], self.timeout)
        if not listing.ok:
            self._error(f"pct list: {listing.stderr.strip()[:200]}")
            return 0
        running = parse_running(listing.stdout)
        self.history.retain(set(running))
        for gone in set(self._disk_at) - set(running):  # a container started again is read at once
            del self._disk_at[gone]
        now = time.time()
        rows = [r for r in await asyncio.gather(*(self._one(v, now) for v in running)) if r is not None]
        if self.store is not None:
            await asyncio.to_thread(self.store.add, rows)
        self.cycles += 1
        return len(rows)

    async def node_capacity(self, node: str) -> dict[str, Any]:
        """The node's CPUs and memory (a reading at most `capacity_refresh` s old) and its running
        guests' allocations (read now); see `actors.autoscale.capacity`."""
        now = time.time()
        cached = self._hardware.get(node)
        fresh = cached is not None and now - cached[2] < self.capacity_refresh
        argvs = ([] if fresh else [status_argv(node)]) + [guests_argv(node, kind) for kind in KINDS]
        results = await asyncio.gather(*(self.pool.run(self.host, self.ssh, argv, self.timeout) for argv in argvs))
        cap = NodeCapacity(node)
        if not fresh:
            hardware = read_status(node, results[0], cap.errors)
            if hardware is None:
                self._hardware.pop(node, None)
            else:
                self._hardware[node] = (*hardware, now)
        listings = results[len(results) - len(KINDS) :]
        cap.guests = read_guests(node, dict(zip(KINDS, listings, strict=True)), cap.errors)
        if node in self._hardware:
            cap.cores, cap.memory_mb, cap.read_at = self._hardware[node]
        return cap.as_dict()

    async def histories(self) -> dict[str, list[dict[str, Any]]]:
        return {vmid: [s.as_dict() for s in self.history.samples(vmid)] for vmid in self.history.containers()}

    async def history_since(self, since: dict[str, float]) -> dict[str, Any]:
        """What a holder of a copy of `histories()` lacks: per container held, the samples newer than
        `since[vmid]` (all of them for a container not in `since`) and the time of the oldest sample
        held (`first`: the copy drops what is older); `maxlen`, the ring's length. Containers not
        listed are no longer held. The scaling model reads it every cycle: the whole rings (720
        samples of every container) were serialized on each side every 2 s."""
        out: dict[str, dict[str, Any]] = {}
        for vmid in self.history.containers():
            held = self.history.samples(vmid)
            after = since.get(vmid)
            newer = held if after is None else [s for s in held if s.t > after]
            out[vmid] = {"first": held[0].t, "samples": [s.as_dict() for s in newer]}
        return {"maxlen": self.history.maxlen, "containers": out}

    async def status(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "cycles": self.cycles,
            "containers": self.history.containers(),
            "errors": self.errors[-5:],
            "disk_pct": json.loads(json.dumps(self.disk)),
            "command": shlex.join(sample_argv("<id>")),
        }

    async def stop(self) -> None:
        await self._tasks.stop()
        await self.pool.close()
        if self.store is not None:
            self.store.close()
