"""What the monitor reads from a container, and how two reads become a sample.

A container's usage files are read with one `pct exec <id> -- cat ...` (the
same files a real container has under lxcfs and cgroup v2). Every counter in
them is cumulative, so usage is always the *delta* between two reads: CPU% is
busy jiffies over total jiffies in the interval (never a lifetime average), I/O
and network are byte rates over the interval.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

USAGE_FILES = (
    "/proc/stat",
    "/proc/meminfo",
    "/sys/fs/cgroup/memory.events",
    "/proc/diskstats",
    "/proc/net/dev",
)
SECTOR = 512


def sample_argv(vmid: str) -> list[str]:
    return ["pct", "exec", vmid, "--", "cat", *USAGE_FILES]


def disk_argv(vmid: str) -> list[str]:
    return ["pct", "exec", vmid, "--", "df", "-P", "/"]


@dataclass(frozen=True, slots=True)
class Counters:
    """One read of a container's cumulative counters at time `t` (seconds)."""

    t: float
    busy: int
    total: int
    ncpu: int
    mem_total_kb: int
    mem_available_kb: int
    swap_total_kb: int
    swap_free_kb: int
    oom_kills: int
    read_sectors: int
    write_sectors: int
    rx_bytes: int
    tx_bytes: int


@dataclass(frozen=True, slots=True)
class Sample:
    """Usage over one interval, ending at `t`."""

    t: float
    cores: int
    cpu_pct: float
    cpu_cores_used: float
    memory_mb: float
    memory_used_mb: float
    swap_used_mb: float
    oom_kills: int
    io_read_bps: float
    io_write_bps: float
    rx_bps: float
    tx_bps: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ParseError(ValueError):
    pass


def _stat(lines: list[str]) -> tuple[int, int, int]:
    busy = total = ncpu = 0
    seen = False
    for line in lines:
        words = line.split()
        if not words:
            continue
        if words[0] == "cpu":
            values = [int(v) for v in words[1:]]
            idle = values[3] + (values[4] if len(values) > 4 else 0)
            total = sum(values[:8])
            busy = total - idle
            seen = True
        elif words[0].startswith("cpu") and words[0][3:].isdigit():
            ncpu += 1
    if not seen:
        raise ParseError("no aggregate cpu line in /proc/stat")
    return busy, total, max(1, ncpu)


def _meminfo(lines: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in lines:
        key, sep, rest = line.partition(":")
        if sep and rest.strip().endswith("kB"):
            out[key.strip()] = int(rest.split()[0])
    return out


def _events(lines: list[str]) -> int:
    for line in lines:
        words = line.split()
        if len(words) == 2 and words[0] == "oom_kill":
            return int(words[1])
    return 0


def _diskstats(lines: list[str]) -> tuple[int, int]:
    read = write = 0
    for line in lines:
        words = line.split()
        if len(words) >= 10 and words[0].isdigit() and words[1].isdigit():
            name = words[2]
            if name.rstrip("0123456789") != name and not name.startswith(("nvme", "mmcblk")):
                continue  # a partition: its whole disk is counted already
            read += int(words[5])
            write += int(words[9])
    return read, write


def _netdev(lines: list[str]) -> tuple[int, int]:
    rx = tx = 0
    for line in lines:
        name, sep, rest = line.partition(":")
        if not sep or "|" in line:
            continue
        words = rest.split()
        if name.strip() == "lo" or len(words) < 9:
            continue
        rx += int(words[0])
        tx += int(words[8])
    return rx, tx


def parse_counters(text: str, t: float) -> Counters:
    """Parse the concatenated usage files (in `USAGE_FILES` order, any order works)."""
    lines = text.splitlines()
    try:
        busy, total, ncpu = _stat(lines)
        mem = _meminfo(lines)
        read, write = _diskstats(lines)
        rx, tx = _netdev(lines)
        return Counters(
            t=t,
            busy=busy,
            total=total,
            ncpu=ncpu,
            mem_total_kb=mem["MemTotal"],
            mem_available_kb=mem.get("MemAvailable", mem.get("MemFree", 0)),
            swap_total_kb=mem.get("SwapTotal", 0),
            swap_free_kb=mem.get("SwapFree", 0),
            oom_kills=_events(lines),
            read_sectors=read,
            write_sectors=write,
            rx_bytes=rx,
            tx_bytes=tx,
        )
    except (KeyError, ValueError, IndexError) as exc:
        raise ParseError(f"unreadable usage files: {exc}") from exc


def derive(prev: Counters, cur: Counters) -> Sample | None:
    """The interval between two reads; None when it is empty or the counters went back (restart)."""
    dt = cur.t - prev.t
    d_total = cur.total - prev.total
    d_busy = cur.busy - prev.busy
    if dt <= 0 or d_total <= 0 or d_busy < 0:
        return None
    pct = 100.0 * d_busy / d_total
    return Sample(
        t=cur.t,
        cores=cur.ncpu,
        cpu_pct=round(pct, 3),
        cpu_cores_used=round(pct / 100.0 * cur.ncpu, 4),
        memory_mb=cur.mem_total_kb / 1024,
        memory_used_mb=round((cur.mem_total_kb - cur.mem_available_kb) / 1024, 2),
        swap_used_mb=round((cur.swap_total_kb - cur.swap_free_kb) / 1024, 2),
        oom_kills=max(0, cur.oom_kills - prev.oom_kills),
        io_read_bps=max(0, cur.read_sectors - prev.read_sectors) * SECTOR / dt,
        io_write_bps=max(0, cur.write_sectors - prev.write_sectors) * SECTOR / dt,
        rx_bps=max(0, cur.rx_bytes - prev.rx_bytes) / dt,
        tx_bps=max(0, cur.tx_bytes - prev.tx_bytes) / dt,
    )


def parse_df(text: str) -> float | None:
    """Use% of the root filesystem from `df -P /` (None when absent)."""
    for line in text.splitlines()[1:]:
        words = line.split()
        if len(words) >= 6 and words[-1] == "/" and words[-2].endswith("%"):
            return float(words[-2].rstrip("%"))
    return None
