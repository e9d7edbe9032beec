"""What is carried from one HAProxy's stick table into the next: flags, counters and rates, never
the old process's open connections, never an entry that expired since it was read."""

from __future__ import annotations

from actors.mitigation.haproxy_process import current_worker_pid
from actors.mitigation.haproxy_stats import parse_table
from actors.mitigation.stick_table import COMMANDS_PER_LINE, Snapshot, restore_lines, set_command

SHOWN = """# table: mitigation, type: ipv6, size:204800, used:2
0x1: key=::ffff:127.0.0.9 use=1 exp=59992 gpt0=1 gpc0=3 conn_rate(1000)=4 conn_cur=2 http_req_rate(1000)=55 http_err_rate(10000)=0 gpc1=7
0x2: key=::1 use=0 exp=1200 gpt0=0 gpc0=0 conn_rate(1000)=0 conn_cur=0 http_req_rate(1000)=0 http_err_rate(10000)=0 gpc1=0
"""


def test_a_flagged_entry_is_recreated_with_its_flag_counters_and_rates_but_not_its_connections():
    flooder = parse_table(SHOWN)[0]
    assert set_command("mitigation", flooder) == (
        "set table mitigation key ::ffff:127.0.0.9 data.gpt0 1 data.gpc0 3 data.conn_rate 4 "
        "data.http_req_rate 55 data.gpc1 7"
    )


def test_an_entry_with_nothing_to_carry_is_left_out():
    assert set_command("mitigation", parse_table(SHOWN)[1]) is None
    assert restore_lines("mitigation", parse_table(SHOWN)) == [set_command("mitigation", parse_table(SHOWN)[0])]


def test_entries_that_expired_since_the_snapshot_are_not_restored():
    snapshot = Snapshot(parse_table(SHOWN), taken=100.0)
    assert [e.key for e in snapshot.live(now=100.5)] == ["::ffff:127.0.0.9", "::1"]
    assert [e.key for e in snapshot.live(now=102.0)] == ["::ffff:127.0.0.9"]  # ::1 had 1.2 s left


def test_many_entries_go_in_lines_of_joined_commands():
    rows = "\n".join(f"0x{n}: key=10.0.{n // 256}.{n % 256} use=0 exp=5000 gpt0=1" for n in range(250))
    lines = restore_lines("mitigation", parse_table(rows))
    assert len(lines) == 3 and lines[0].count("; ") == COMMANDS_PER_LINE - 1
    assert sum(line.count("set table") for line in lines) == 250


def test_the_current_worker_is_read_from_the_masters_process_list():
    shown = (
        "#<PID>          <type>          <reloads>       <uptime>        <version>\n"
        "10689           master          1 [failed: 0]   0d00h00m07s     2.6.12\n"
        "# workers\n"
        "10738           worker          0               0d00h00m00s     2.6.12\n"
        "# old workers\n"
        "10692           worker          1               0d00h00m07s     2.6.12\n"
        "# programs\n"
    )
    assert current_worker_pid(shown) == 10738
    assert current_worker_pid("#<PID> <type>\n10689 master 0\n# workers\n# programs\n") is None
