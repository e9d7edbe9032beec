"""The node monitor's state machine, driven by canned HAProxy answers and log records (no HAProxy).

The monitor sees its node through the `MonitoredNode` protocol; `FakeNode` here is a second
implementation that records what the monitor asks of it (blacklisting, events).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from actors.mitigation.accounting import Monotonic, ThreatBook
from actors.mitigation.haproxy_config import BACKEND, FRONTEND
from actors.mitigation.haproxy_stats import LogRecord
from actors.mitigation.inspection import Inspection
from actors.mitigation.node_metrics import NodeMetrics
from actors.mitigation.node_monitor import EVENT_DEDUP_SECONDS, RATE_WINDOW_S, SLOWLORIS_TIMEOUTS, Monitor
from actors.mitigation.rules import CustomRule, new_rule
from actors.mitigation.settings import NodeSettings
from rayfleet.tasks import BackgroundTasks
from tests.polling import eventually

STAT_HEADER = "# pxname,svname,scur,req_tot,stot,dreq,dcon,dses,req_rate,rate,rtime,\n"


class FakeProc:
    """Answers `show info`, `show stat` and `show table` with whatever the test set last."""

    def __init__(self) -> None:
        self.running = True
        self.info = "CumConns: 0\n"
        self.stat = STAT_HEADER
        self.table = ""
        self.commands: list[str] = []

    def set_stat(self, frontend: dict[str, int], backend: dict[str, int] | None = None) -> None:
        def row(px: str, sv: str, values: dict[str, int]) -> str:
            cols = ("scur", "req_tot", "stot", "dreq", "dcon", "dses", "req_rate", "rate", "rtime")
            return ",".join([px, sv, *(str(values.get(c, 0)) for c in cols)]) + ",\n"

        self.stat = STAT_HEADER + row(FRONTEND, "FRONTEND", frontend) + row(BACKEND, "BACKEND", backend or {})

    def set_table(self, *entries: str) -> None:
        self.table = "# table: mitigation, type: ip\n" + "".join(f"0x1: key={e}\n" for e in entries)

    async def command(self, command: str, payload: str | None = None) -> str:
        self.commands.append(command)
        if command == "show info":
            return self.info
        if command == "show stat":
            return self.stat
        if command.startswith("show table") and " key " in command:  # one source's entry
            wanted = command.rsplit(" ", 1)[1].removeprefix("::ffff:")
            return "".join(line + "\n" for line in self.table.splitlines() if f"key={wanted} " in line + " ")
        if command.startswith("show table"):
            return self.table
        raise AssertionError(f"unexpected command {command!r}")

    def process_ids(self) -> list[int]:
        return []


@dataclass
class FakeNode:
    settings: NodeSettings = field(default_factory=NodeSettings)
    node_id: str = "node-t"
    started: float = field(default_factory=time.time)
    draining: bool = False
    proc: Any = field(default_factory=FakeProc)
    rules: dict[str, CustomRule] = field(default_factory=dict)
    builtin_hits: dict[str, int] = field(default_factory=dict)
    threats: ThreatBook = field(default_factory=ThreatBook)
    counters: dict[str, Monotonic] = field(
        default_factory=lambda: {n: Monotonic() for n in ("requests", "blocked", "connections", "served")}
    )
    metrics: NodeMetrics = field(default_factory=lambda: NodeMetrics("monitor-test"))
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    blacklisted: list[tuple[str, str, int]] = field(default_factory=list)
    expiries: int = 0
    table_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    tasks: BackgroundTasks = field(default_factory=lambda: BackgroundTasks("mitigation-test"))
    inspection: Inspection = field(default_factory=lambda: Inspection(Path("/nonexistent/crs"), "node-t"))
    blacklist: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return "127.0.0.1:1"

    def describe(self) -> dict[str, Any]:
        return {"id": self.node_id, "address": self.address}

    async def expire_blacklist(self) -> None:
        self.expiries += 1

    async def add_blacklist(self, ip: str, reason: str, duration_seconds: int, source: str = "api") -> dict[str, Any]:
        self.blacklisted.append((ip, reason, duration_seconds))
        return {}

    def raise_event(self, event: str, data: dict[str, Any]) -> None:
        self.events.append((event, data))

    def update_child_metrics(self) -> None:
        pass

    def children(self) -> list[Any]:
        return []


def _record(src: str = "10.0.0.9", **fields: Any) -> LogRecord:
    values: dict[str, Any] = {"status": 200, "reason": None, "rules": {}, "score": 0, "time_ms": 3, "term": "----"}
    values.update(fields)
    return LogRecord(src=src, **values)


@pytest.fixture
def node() -> FakeNode:
    return FakeNode()


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """The monitor's monotonic clock, moved by the test."""
    now = [1000.0]
    monkeypatch.setattr("actors.mitigation.node_monitor._now", lambda: now[0])
    return now


async def measured(node: FakeNode) -> None:
    """Wait until the events raised from log lines have read their source's rate."""
    await eventually(lambda: node.tasks.running == 0, what="the rate lookups done")


async def test_a_poll_turns_the_frontends_counters_into_monotonic_totals(node):
    monitor = Monitor(node)
    node.proc.set_stat({"req_tot": 50, "dreq": 4, "dcon": 1, "scur": 3, "req_rate": 9}, {"rtime": 12})
    node.proc.info = "CumConns: 20\n"
    await monitor.poll()
    node.proc.set_stat({"req_tot": 5, "dreq": 1, "scur": 2, "req_rate": 4}, {"rtime": 8})  # a reload: from zero
    await monitor.poll()
    stats = await monitor.stats()
    assert stats["packets_processed"] == 50 + 1 + 5  # requests plus refused connections
    assert stats["attacks_blocked"] == 4 + 1 + 1
    assert stats["requests_per_second"] == 4 and stats["latency_ms"] == 8.0
    # served (the autoscaler's load): requests minus the ones HAProxy denied, monotonic too
    assert (await monitor.heartbeat())["served_total"] == (50 - 4) + (5 - 1)
    assert node.expiries == 2  # each poll expires lapsed blacklist entries
    status = await monitor.status()
    assert status["connections"] == {"active": 2, "total": 20}
    assert status["health"] == "healthy" and status["status"] == "running"


async def test_syn_mode_counts_sessions_not_requests(node):
    node.settings = NodeSettings(mode="syn")
    node.proc.set_stat({"req_tot": 999, "stot": 30, "dses": 4, "rate": 6})
    monitor = Monitor(node)
    await monitor.poll()
    stats = await monitor.stats()
    assert stats["packets_processed"] == 30 and stats["requests_per_second"] == 6
    assert (await monitor.heartbeat())["served_total"] == 30  # rejected sessions (dses) are not in stot


async def test_a_stopped_data_plane_is_not_polled_and_reports_unhealthy(node):
    node.proc.running = False
    monitor = Monitor(node)
    await monitor.poll()
    assert node.proc.commands == [] and monitor.polls == 0
    assert (await monitor.heartbeat())["status"] == "unhealthy"
    node.draining = True
    assert (await monitor.status())["health"] == "draining"


async def test_a_flood_is_reported_once_with_its_rate_over_a_whole_window(node, clock):
    monitor = Monitor(node)
    node.proc.set_table("10.0.0.5 gpt0=1 gpc1=10 http_req_rate(1000)=30 conn_rate(1000)=2")
    await monitor.poll()
    clock[0] += RATE_WINDOW_S / 2
    node.proc.set_table("10.0.0.5 gpt0=1 gpc1=25 http_req_rate(1000)=60 conn_rate(1000)=20")
    await monitor.poll()
    assert node.events == []  # caught, blocked, but not measured over a whole second yet
    clock[0] += RATE_WINDOW_S / 2
    # flagged: its attempts are refused connections now, so conn_rate is the rate that counts
    node.proc.set_table("10.0.0.5 gpt0=1 gpc1=90 http_req_rate(1000)=12 conn_rate(1000)=85")
    await monitor.poll()
    await monitor.poll()
    record = node.threats.sources["10.0.0.5"]
    assert record.attacks == 90 and record.attack_type == "http_flood"
    assert [e for e, _ in node.events] == ["attack_detected"]
    event = node.events[0][1]
    assert event == {
        "attack_type": "http_flood",
        "source_ip": "10.0.0.5",
        "packets_per_second": 85,
        "action": "blocked",
    }
    assert node.blacklisted == []  # a first offence is the stick table's own ban


async def test_an_unflagged_denial_is_a_rate_limit(node, clock):
    monitor = Monitor(node)
    node.proc.set_table("10.0.0.6 gpt0=0 gpc1=3 http_req_rate(1000)=12")
    await monitor.poll()
    clock[0] += RATE_WINDOW_S
    await monitor.poll()
    assert node.events[0][1]["packets_per_second"] == 12
    assert node.threats.sources["10.0.0.6"].attack_type == "rate_limit"
    assert node.events[0][1]["action"] == "rate_limited"


async def test_a_repeat_flooder_is_blacklisted_longer_each_time(node):
    node.settings = NodeSettings(ban_seconds=60, escalation_multiplier=3.0, max_ban_seconds=1000)
    monitor = Monitor(node)
    for offence in range(3):
        node.proc.set_table(f"10.0.0.7 gpt0=1 gpc1={offence + 1}")
        await monitor.poll()
        node.proc.set_table()  # its ban lapsed: the entry left the table
        await monitor.poll()
    assert node.blacklisted == [
        ("10.0.0.7", "repeat http_flood (offence 2)", 180),
        ("10.0.0.7", "repeat http_flood (offence 3)", 540),
    ]


async def test_the_escalated_ban_is_capped(node):
    node.settings = NodeSettings(ban_seconds=600, escalation_multiplier=10.0, max_ban_seconds=1000)
    monitor = Monitor(node)
    for _ in range(2):
        node.proc.set_table("10.0.0.8 gpt0=1 gpc1=1")
        await monitor.poll()
        node.proc.set_table()
        await monitor.poll()
    assert node.blacklisted == [("10.0.0.8", "repeat http_flood (offence 2)", 1000)]


async def test_rule_hits_are_counted_for_custom_and_builtin_rules(node):
    rule = new_rule("evil", "block", "high", "rule-1")
    node.rules[rule.id] = rule
    monitor = Monitor(node)
    monitor.on_log(_record(status=403, reason="waf", rules={"block": "rule-1", "critical": "crs-sqli-union"}))
    monitor.on_log(_record(status=200, rules={"critical": "crs-sqli-union"}))
    await measured(node)
    assert rule.hits == 1
    assert node.builtin_hits == {"crs-sqli-union": 2}
    assert node.threats.sources["10.0.0.9"].attack_type == "waf"  # only the blocked request is an attack
    assert node.threats.sources["10.0.0.9"].attacks == 1


async def test_rule_events_are_deduplicated_per_rule_and_source(node, clock):
    monitor = Monitor(node)
    now = clock
    node.proc.set_table("10.0.0.9 gpc1=0 http_req_rate(1000)=4 conn_rate(1000)=1")
    monitor.on_log(_record(rules={"critical": "crs-sqli-union"}, score=5))
    monitor.on_log(_record(rules={"critical": "crs-sqli-union"}, score=5))
    monitor.on_log(_record(src="10.0.0.10", rules={"critical": "crs-sqli-union"}))
    now[0] += EVENT_DEDUP_SECONDS + 0.1
    monitor.on_log(_record(rules={"critical": "crs-sqli-union"}))
    await measured(node)
    events = [data for name, data in node.events if name == "rule_triggered"]
    assert [e["source_ip"] for e in events] == ["10.0.0.9", "10.0.0.10", "10.0.0.9"]
    assert [e["packets_per_second"] for e in events] == [4, 0, 4]  # 10.0.0.10 has no entry: 0
    assert events[0]["attack_type"] == "sql_injection" and events[0]["action"] == "logged"
    assert events[0]["anomaly_score"] == 5 and events[0]["severity"] == "critical"


async def test_header_timeouts_from_one_source_become_a_slowloris_attack(node):
    monitor = Monitor(node)
    node.proc.set_table("10.0.0.9 gpc1=0 conn_rate(1000)=7")
    for _ in range(SLOWLORIS_TIMEOUTS - 1):
        monitor.on_log(_record(status=408))
    assert "10.0.0.9" not in node.threats.sources
    monitor.on_log(_record(status=0, term="cR--"))
    assert node.threats.sources["10.0.0.9"].attack_type == "slowloris"
    await measured(node)
    assert node.events[-1] == (
        "attack_detected",
        {"attack_type": "slowloris", "source_ip": "10.0.0.9", "action": "timed_out", "packets_per_second": 7},
    )


def test_the_threat_summary_reads_the_book(node):
    monitor = Monitor(node)
    node.threats.record("10.0.0.1", "syn_flood", 4)
    summary = monitor.threat_summary()
    assert summary["active_threats"] == 1
    assert summary["sources"] == {"10.0.0.1": {"attacks": 4, "type": "syn_flood"}}
    assert summary["attack_types"]["syn_flood"] == 4
