"""Carry a node's stick table (flood flags, per-source rates and counters) into a new HAProxy.

A policy reload starts new workers and a restart a new process, each with an empty table, which
would let the flooders just caught back in. So the table is read over the runtime API (`show
table`) just before a reload, and kept from every monitor poll for a restart nobody saw coming;
the new workers get it back with `set table <t> key <k> data.<type> <value>`.

HAProxy 2.6 sets every data type this way: a rate (`http_req_rate`, `conn_rate`, ...) is set as
the count of the current period. `conn_cur` is not carried (the new process has none of the old
connections), nor the expiry: 2.6's `set table` cannot set it, so a restored entry expires
`ban_seconds` after the restore, like an entry touched at that moment.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from actors.mitigation.haproxy_stats import TableEntry

# data types restored: the rest (conn_cur) describes the old process only
RESTORED = ("gpt0", "gpc0", "gpc1", "http_req_rate", "http_err_rate", "conn_rate")
_NAME = re.compile(r"^(\w+?)(?:\(\d+\))?$")
COMMANDS_PER_LINE = 100  # `;`-joined on one CLI line, well under HAProxy's 16 KiB command buffer


@dataclass
class Snapshot:
    """The entries of one table, as read at `taken` (monotonic seconds)."""

    entries: list[TableEntry] = field(default_factory=list)
    taken: float = field(default_factory=time.monotonic)

    def live(self, now: float | None = None) -> list[TableEntry]:
        """The entries that had not expired by `now` (an entry shows its time left as `exp`, in ms)."""
        elapsed_ms = ((time.monotonic() if now is None else now) - self.taken) * 1000
        return [e for e in self.entries if "exp" not in e.fields or e.fields["exp"] > elapsed_ms]


def set_command(table: str, entry: TableEntry) -> str | None:
    """The `set table` command that recreates `entry` (None: nothing worth carrying)."""
    data = []
    for name, value in entry.fields.items():
        match = _NAME.match(name)
        if match and match.group(1) in RESTORED and value > 0:
            data.append(f"data.{match.group(1)} {value}")
    if not data:
        return None
    return f"set table {table} key {entry.key} " + " ".join(data)


def cli_lines(commands: list[str]) -> list[str]:
    """`commands` as CLI lines of up to COMMANDS_PER_LINE `;`-joined commands each."""
    return ["; ".join(commands[i : i + COMMANDS_PER_LINE]) for i in range(0, len(commands), COMMANDS_PER_LINE)]


def restore_lines(table: str, entries: list[TableEntry]) -> list[str]:
    """CLI lines that put `entries` back."""
    return cli_lines([c for c in (set_command(table, e) for e in entries) if c is not None])
