"""dnsmasq's query log (`log-queries=extra`, `log-facility=<file>`) turned into one row per query.

With `extra` every line of a query carries dnsmasq's serial number and the client's address/port:

    Nov 26 16:13:00 dnsmasq[14861]: 2 127.0.0.1/35653 query[A] ads.test from 127.0.0.1
    Nov 26 16:13:00 dnsmasq[14861]: 2 127.0.0.1/35653 config ads.test is 0.0.0.0
    Nov 26 16:13:00 dnsmasq[14861]: 6 198.18.7.2/41354 forwarded shop.test to 198.19.7.2
    Nov 26 16:13:00 dnsmasq[14861]: 6 198.18.7.2/41354 reply shop.test is 127.0.0.1

A `query` line opens a query (keyed by dnsmasq's pid and the serial, which restarts with the process);
the lines after it say how it was answered. `Assembler` keeps the open queries between batches and
emits a row once a query has an answer (or, when none comes, after `timeout` seconds as `no_answer`).
dnsmasq writes a syslog time stamp (local time, no year, whole seconds).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from actors.webfilter.logparse import iso_time

LINE = re.compile(
    r"^(?P<stamp>\w{3} +\d{1,2} \d\d:\d\d:\d\d) dnsmasq\[(?P<pid>\d+)\]: (?P<serial>\d+) "
    r"(?P<peer>\S+)/\d+ (?P<what>\S+) (?P<rest>.*)$"
)
QUERY = re.compile(r"^query\[(?P<qtype>[A-Za-z0-9]+)\]$")
IS = re.compile(r"^(?P<name>\S+) is (?P<answer>.+)$")
BLOCKED = {"0.0.0.0": "sinkholed", "::": "sinkholed", "NXDOMAIN": "nxdomain"}
Outcome = Literal["sinkholed", "nxdomain", "local", "forwarded", "cached", "refused", "no_answer"]
OUTCOMES: tuple[str, ...] = get_args(Outcome)
MAX_ANSWERS = 8  # answer records kept per row


@dataclass
class DnsRow:
    """One query: when, who, what was asked, and how it was answered. `blocked` rows (sinkholed, NXDOMAIN
    from the blocklist) get the rule and source that decided them when the tailer attributes them."""

    ts: float
    client: str
    name: str
    qtype: str
    outcome: str = "no_answer"
    answers: list[str] = field(default_factory=list)
    upstream: str | None = None
    rule: str | None = None
    source: str | None = None
    pid: int = 0  # the dnsmasq that answered: the global one, or a client group's view
    group: str | None = None  # the client group whose view answered (named by the tailer from `pid`)

    @property
    def blocked(self) -> bool:
        return self.outcome in ("sinkholed", "nxdomain")

    @property
    def decided(self) -> tuple[str | None, bool, str | None, str | None, str | None]:
        """upstream, blocked, rule, source, group: the columns after the answer."""
        return self.upstream, self.blocked, self.rule, self.source, self.group

    @property
    def answer(self) -> str:
        return ",".join(self.answers)

    def message(self) -> dict[str, Any]:
        """The live stream's shape of a DNS row: the HTTP row's fields (`method: "DNS"`, the name as
        `destination` and `host`, no status or bytes) plus what only a query has; `source: "dns"`."""
        return {
            "source": "dns",
            "timestamp": iso_time(self.ts),
            "unix_timestamp": self.ts,
            "client_ip": self.client,
            "method": "DNS",
            "destination": self.name,
            "host": self.name,
            "status": None,
            "squid_status": None,
            "bytes": None,
            "elapsed_ms": None,
            "blocked": self.blocked,
            "rule": self.rule,
            "qtype": self.qtype,
            "outcome": self.outcome,
            "answer": self.answer or None,
            "upstream": self.upstream,
            "rule_source": self.source,
            "group": self.group,
        }


def stamp_to_epoch(stamp: str, now: float | None = None) -> float | None:
    """`Nov 26 16:13:00` (local time, no year) as epoch seconds: this year, or last year for a stamp that
    would lie more than a day ahead (a log read across New Year)."""
    now = time.time() if now is None else now
    year = time.localtime(now).tm_year
    for candidate in (year, year - 1):
        try:
            parsed = time.strptime(f"{candidate} {' '.join(stamp.split())}", "%Y %b %d %H:%M:%S")
        except ValueError:
            return None
        epoch = time.mktime(parsed)
        if epoch <= now + 86400:
            return epoch
    return None


def _sinkholed(row: DnsRow) -> None:
    """A query forwarded to a sinkhole: blocked, and the sinkhole is no upstream."""
    row.outcome, row.upstream = "sinkholed", None


class Assembler:
    """Open queries between batches; `feed(lines)` returns the rows completed by them."""

    def __init__(self, timeout: float = 30.0, limit: int = 100_000, sinkholes: set[str] | None = None) -> None:
        # the sinkholes' `addr#port`: an answer forwarded to one is `sinkholed` (a name blocked since dnsmasq's
        # last start, in its servers-file), not `forwarded`
        self.sinkholes: set[str] = set(sinkholes or ())
        self.open: dict[tuple[str, str], DnsRow] = {}
        self.answered: set[tuple[str, str]] = set()
        self.timeout = timeout
        self.limit = limit
        self._stamps: dict[str, float | None] = {}  # a second's stamp is parsed once (strptime is slow)

    def unknown_loopback_upstreams(self, rows: list[DnsRow]) -> set[str]:
        """The loopback upstreams `rows` were forwarded to that are no known sinkhole: where a data plane
        restarted on another port has its sinkhole now (or a resolver the operator runs on this host)."""
        return {r.upstream for r in rows if r.outcome == "forwarded" and r.upstream and r.upstream.startswith("127.")}

    def learn_sinkhole(self, address: str, rows: list[DnsRow]) -> None:
        """`address` is a sinkhole: from now on, and for the completed `rows` forwarded to it."""
        self.sinkholes.add(address)
        for row in rows:
            if row.outcome == "forwarded" and row.upstream == address:
                _sinkholed(row)

    def feed(self, lines: list[str], now: float | None = None) -> list[DnsRow]:
        now = time.time() if now is None else now
        for line in lines:
            self._line(line, now)
        done = [key for key in self.open if key in self.answered]
        stale = [key for key, row in self.open.items() if key not in self.answered and row.ts < now - self.timeout]
        rows = [self.open.pop(key) for key in [*done, *stale]]
        self.answered.clear()
        while len(self.open) > self.limit:  # a flood of unanswered queries: the oldest are given up
            rows.append(self.open.pop(next(iter(self.open))))
        return sorted(rows, key=lambda r: r.ts)

    def _stamp(self, stamp: str, now: float) -> float | None:
        if stamp not in self._stamps:
            if len(self._stamps) > 4096:
                self._stamps.clear()
            self._stamps[stamp] = stamp_to_epoch(stamp, now)
        return self._stamps[stamp]

    def _line(self, line: str, now: float) -> None:
        match = LINE.match(line.rstrip("\n"))
        if match is None:
            return
        key = (match["pid"], match["serial"])
        what, rest = match["what"], match["rest"]
        query = QUERY.match(what)
        if query is not None:
            name, _, client = rest.partition(" from ")
            ts = self._stamp(match["stamp"], now)
            if ts is not None:
                self.open[key] = DnsRow(
                    ts, client or match["peer"], name.lower(), query["qtype"], pid=int(match["pid"])
                )
            return
        row = self.open.get(key)
        if row is None:
            return
        if what == "forwarded":
            row.upstream = rest.rpartition(" to ")[2] or None
            row.outcome = "forwarded"
            return
        answer = IS.match(rest)
        if answer is None:
            return
        value = answer["answer"]
        if what == "config":
            if value.startswith("REFUSED") or answer["name"] == "error":
                row.outcome = "refused"
            else:
                row.outcome = BLOCKED.get(value, "local")
        elif what == "reply":
            if row.upstream in self.sinkholes:
                _sinkholed(row)
            elif row.outcome != "sinkholed":
                row.outcome = "forwarded"
        elif what == "cached":
            row.outcome = "cached"
        elif what.startswith("/"):  # a hosts file: the configured names
            row.outcome = "local"
        else:
            return
        if len(row.answers) < MAX_ANSWERS:
            row.answers.append(value)
        self.answered.add(key)
