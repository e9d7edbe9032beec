"""The monitor's parsing: CPU% is a per-interval delta, ids and rates from the real file formats."""

from __future__ import annotations

import pytest

from actors.autoscale.history import RingHistory
from actors.autoscale.monitor import parse_running
from actors.autoscale.sampling import ParseError, derive, parse_counters, parse_df

STAT = """cpu  {u} 0 {s} {i} 0 0 0 0 0 0
cpu0 1 0 0 1 0 0 0 0 0 0
cpu1 1 0 0 1 0 0 0 0 0 0
ctxt 1
"""
MEM = "MemTotal:  1048576 kB\nMemFree:  1 kB\nMemAvailable:  524288 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"
NET = "Inter-|   Receive\n face |bytes\n    lo: 5 0 0 0 0 0 0 0 5 0 0 0 0 0 0 0\n  eth0: {rx} 1 0 0 0 0 0 0 {tx} 1 0 0 0 0 0 0\n"
DISK = "   8       0 sda 1 0 {r} 0 1 0 {w} 0 0 0 0\n   8       1 sda1 1 0 999 0 1 0 999 0 0 0 0\n"


def text(u: int, i: int, rx: int = 0, r: int = 0, oom: int = 0) -> str:
    return STAT.format(u=u, s=0, i=i) + MEM + f"oom_kill {oom}\n" + DISK.format(r=r, w=0) + NET.format(rx=rx, tx=0)


def test_cpu_is_the_delta_between_two_reads_not_a_lifetime_average():
    first = parse_counters(text(u=900_000, i=100_000), 0)  # lifetime: 90 % busy
    second = parse_counters(text(u=900_000 + 300, i=100_000 + 900), 6)  # this interval: 25 %
    sample = derive(first, second)
    assert sample is not None
    assert sample.cpu_pct == pytest.approx(25.0)
    assert sample.cores == 2 and sample.cpu_cores_used == pytest.approx(0.5)
    assert sample.memory_used_mb == pytest.approx(512)


def test_rates_count_whole_disks_and_skip_loopback():
    first = parse_counters(text(1, 1, rx=1000, r=10), 0)
    second = parse_counters(text(2, 2, rx=3000, r=30, oom=2), 2)
    sample = derive(first, second)
    assert sample.rx_bps == pytest.approx(1000)
    assert sample.io_read_bps == pytest.approx(20 * 512 / 2)
    assert sample.oom_kills == 2


def test_a_counter_reset_gives_no_sample():
    assert derive(parse_counters(text(500, 500), 0), parse_counters(text(10, 10), 5)) is None


def test_garbage_is_a_parse_error():
    with pytest.raises(ParseError):
        parse_counters("hello\n", 0)


def test_ring_history_is_bounded_and_forgets_gone_containers():
    ring = RingHistory(maxlen=3)
    for n in range(10):
        ring.observe("101", parse_counters(text(100 * n, 100 * n), n))
    assert len(ring.samples("101")) == 3
    ring.retain(set())
    assert ring.samples("101") == [] and ring.containers() == []


def test_df_and_pct_list_parsing():
    df = "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/x 8256952 1899100 5920000 25% /\n"
    assert parse_df(df) == 25.0
    listing = "VMID       Status     Lock         Name\n101        running                 a\n102        stopped                 b\n"
    assert parse_running(listing) == ["101"]
