"""What a node learns from its data plane: stats socket, stick table and log stream → figures and events."""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from actors.mitigation.accounting import Monotonic, ThreatBook
from actors.mitigation.haproxy_config import BACKEND, FRONTEND, source_of, table_key
from actors.mitigation.haproxy_process import HAProxyProcess
from actors.mitigation.haproxy_stats import LogRecord, TableEntry, parse_info, parse_stat, parse_table
from actors.mitigation.inspection import Inspection
from actors.mitigation.node_metrics import NodeMetrics
from actors.mitigation.rules import CustomRule
from actors.mitigation.settings import NodeSettings
from actors.mitigation.stick_table import Snapshot
from actors.mitigation.waf_rules import category_of
from rayfleet.logs import get_logger
from rayfleet.supervisor import Status
from rayfleet.tasks import BackgroundTasks

log = get_logger("mitigation")

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SLOWLORIS_TIMEOUTS = 3  # header timeouts from one source before it counts as a slowloris attack
EVENT_DEDUP_SECONDS = 10.0
# a flagged source's `attack_detected` waits this long, so its rate covers a whole window (1 s)
RATE_WINDOW_S = 1.0


def _now() -> float:
    """The clock of event timing (a function of its own, so a test can move it without moving asyncio's)."""
    return time.monotonic()


def attempt_rate(entry: TableEntry | None) -> int:
    """A source's attempts per second over the table's 1 s window: its requests, or its connection
    attempts when those are more (a flagged source is refused before it sends a request, so what it
    sends are connections; a syn node counts connections only)."""
    if entry is None:
        return 0
    return max(entry.get("http_req_rate"), entry.get("conn_rate"))


def _int(row: dict[str, str], name: str) -> int:
    try:
        return int(row.get(name) or 0)
    except ValueError:
        return 0


def _proc_usage(pids: list[int]) -> tuple[float, int]:
    """(CPU seconds, resident bytes) summed over `pids`."""
    cpu, rss = 0.0, 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
            rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    return cpu, rss


class MonitoredNode(Protocol):
    """What the monitor reads and drives on its node (`MitigationNode` is the one implementation).

    The monitor depends on this surface, not on the node module, so the two files import one way."""

    node_id: str
    settings: NodeSettings
    started: float
    draining: bool
    proc: HAProxyProcess
    inspection: Inspection
    blacklist: dict[str, dict[str, Any]]
    rules: dict[str, CustomRule]
    builtin_hits: dict[str, int]
    threats: ThreatBook
    counters: dict[str, Monotonic]
    metrics: NodeMetrics
    table_lock: asyncio.Lock
    tasks: BackgroundTasks

    @property
    def address(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def expire_blacklist(self) -> None: ...

    async def add_blacklist(
        self, ip: str, reason: str, duration_seconds: int, source: str = "api"
    ) -> dict[str, Any]: ...

    def raise_event(self, event: str, data: dict[str, Any]) -> None: ...

    def update_child_metrics(self) -> None: ...

    def children(self) -> list[Status]: ...


class Monitor:
    def __init__(self, node: MonitoredNode) -> None:
        self.node = node
        self.frontend: dict[str, str] = {}
        self.backend: dict[str, str] = {}
        self.info: dict[str, str] = {}
        self.cpu_percent = 0.0
        self.memory_bytes = 0
        self._cpu_mark: tuple[float, float] | None = None
        self._events: deque[dict[str, Any]] = deque(maxlen=500)
        self._last_event: dict[tuple[str, str, str], float] = {}
        self._timeouts: dict[str, int] = {}
        self._offences: dict[str, int] = {}
        # sources flagged, whose attack_detected waits for a full rate window: src -> (since, kind, action)
        self._measuring: dict[str, tuple[float, str, str]] = {}
        self.polls = 0
        # the flagged and denied sources as last read: what a restarted HAProxy gets back
        self.snapshot = Snapshot()

    # -- polling ---------------------------------------------------------------
    async def poll(self) -> None:
        node = self.node
        node.update_child_metrics()
        async with node.table_lock:
            if not node.proc.running:
                return
            try:
                await self._read()
            except (OSError, TimeoutError):  # HAProxy died between two polls: its supervisor restarts it
                log.info("haproxy did not answer the poll", extra={"node": node.node_id})
                return
        self.polls += 1

    def restarted(self) -> None:
        """A new HAProxy: its counters start at zero again (Monotonic absorbs that), its CPU too."""
        self._cpu_mark = None

    async def _read(self) -> None:
        node = self.node
        self.info = parse_info(await node.proc.command("show info"))
        stats = parse_stat(await node.proc.command("show stat"))
        self.frontend = stats.get((FRONTEND, "FRONTEND"), {})
        self.backend = stats.get((BACKEND, "BACKEND"), {})
        self._update_counters()
        self._update_usage()
        await self._scan_table()
        await node.inspection.feed(node)
        await node.expire_blacklist()

    def _update_counters(self) -> None:
        node, fe = self.node, self.frontend
        unit = "req_tot" if node.settings.mode == "l7" else "stot"
        processed = node.counters["requests"].update(_int(fe, unit) + _int(fe, "dcon"))
        blocked = node.counters["blocked"].update(_int(fe, "dreq") + _int(fe, "dcon") + _int(fe, "dses"))
        node.counters["connections"].update(_int(self.info, "CumConns"))
        # served: what the node let through (the autoscaler's load); requests or sessions it denied are not
        # (HAProxy 2.6 counts no session in `stot` that a `tcp-request` rule rejected: syn mode is `stot`)
        served = _int(fe, "req_tot") - _int(fe, "dreq") if node.settings.mode == "l7" else _int(fe, "stot")
        node.counters["served"].update(served)
        node.metrics.inc("service_packets_processed_total", processed)
        node.metrics.inc("service_attacks_blocked_total", blocked)
        node.metrics.set("service_connections_active", _int(fe, "scur"))

    def _update_usage(self) -> None:
        cpu, rss = _proc_usage(self.node.proc.process_ids() + self.node.inspection.process_ids())
        now = time.monotonic()
        if self._cpu_mark is not None and now > self._cpu_mark[0]:
            self.cpu_percent = max(0.0, 100.0 * (cpu - self._cpu_mark[1]) / (now - self._cpu_mark[0]))
        self._cpu_mark = (now, cpu)
        self.memory_bytes = rss
        self.node.metrics.set("service_cpu_usage_percent", round(self.cpu_percent, 2))
        self.node.metrics.set("service_memory_usage_bytes", rss)

    async def _scan_table(self) -> None:
        """Sources the data plane denied (gpc1): floods, rate limits, SYN connection floods."""
        node = self.node
        answer = await node.proc.command(f"show table {FRONTEND} data.gpc1 gt 0")
        l7 = node.settings.mode == "l7"
        seen = set()
        self.snapshot = Snapshot(parse_table(answer))
        for entry in self.snapshot.entries:
            src = source_of(entry.key)
            seen.add(src)
            flagged = entry.get("gpt0") > 0
            kind = ("http_flood" if flagged else "rate_limit") if l7 else "syn_flood"
            rec = node.threats.sources.get(src)
            last = rec.last_gpc if rec else 0
            gpc = entry.get("gpc1")
            grew = gpc - last if gpc >= last else gpc
            rec = node.threats.record(src, kind, grew) if grew > 0 else rec
            if rec is None:
                continue
            rec.last_gpc = gpc
            if rec.flagged_since is None:
                rec.flagged_since = time.time()
                action = "blocked" if flagged and l7 else "rate_limited"
                self._measuring.setdefault(src, (_now(), kind, action))
                if flagged:
                    await self._escalate(src, kind)
        self._report_measured({source_of(e.key): e for e in self.snapshot.entries})
        for src, rec in node.threats.sources.items():
            if src not in seen and rec.flagged_since is not None and rec.last_gpc:
                rec.flagged_since = None
                rec.last_gpc = 0

    def _report_measured(self, entries: dict[str, TableEntry]) -> None:
        """`attack_detected` for each source measured over a whole window since it was caught, with
        its attempt rate then (a source gone from the table by then gets the rate 0)."""
        now = _now()
        for src, (since, kind, action) in list(self._measuring.items()):
            if now - since >= RATE_WINDOW_S:
                del self._measuring[src]
                self.attack(kind, src, attempt_rate(entries.get(src)), action)

    async def source_rate(self, src: str) -> int:
        """`src`'s attempts per second now, from its stick-table entry (0 when it has none)."""
        entries = parse_table(await self.node.proc.command(f"show table {FRONTEND} key {table_key(src)}"))
        return attempt_rate(entries[0] if entries else None)

    async def _escalate(self, src: str, kind: str) -> None:
        """fail2ban-style: a source flagged again after its ban lapsed is blacklisted, longer each time."""
        settings = self.node.settings
        offences = self._offences.get(src, 0) + 1
        self._offences[src] = offences
        if len(self._offences) > 10000:
            self._offences.clear()
        if offences < 2 or settings.escalation_multiplier <= 1:
            return
        seconds = settings.ban_seconds * settings.escalation_multiplier ** (offences - 1)
        duration = int(min(settings.max_ban_seconds, seconds))
        await self.node.add_blacklist(src, f"repeat {kind} (offence {offences})", duration, f"escalation/{kind}")

    # -- log stream ------------------------------------------------------------
    def on_log(self, record: LogRecord) -> None:
        node = self.node
        if record.time_ms >= 0 and record.reason is None and record.status and record.status < 400:
            node.metrics.observe("service_latency_seconds", record.time_ms / 1000.0)
        for rule_id in set(record.rules.values()):
            rule = node.rules.get(rule_id)
            if rule is not None:
                rule.hits += 1
            else:
                node.builtin_hits[rule_id] = node.builtin_hits.get(rule_id, 0) + 1
            self._rule_event(rule_id, record)
        if record.reason == "waf":
            node.threats.record(record.src, "waf")
        if record.status == 408 or record.term.startswith("cR"):
            self._header_timeout(record.src)

    def _rule_event(self, rule_id: str, record: LogRecord) -> None:
        rule = self.node.rules.get(rule_id)
        category = category_of(rule_id) or "custom"
        data = {
            "attack_type": category,
            "source_ip": record.src,
            "action": "blocked" if record.reason == "waf" else "logged",
            "rule_id": rule_id,
            "severity": rule.severity if rule else "critical",
            "anomaly_score": record.score,
        }
        if self._fresh("rule_triggered", rule_id, record.src):
            self._measured_event("rule_triggered", data)

    def _header_timeout(self, src: str) -> None:
        count = self._timeouts.get(src, 0) + 1
        self._timeouts[src] = count
        if len(self._timeouts) > 10000:
            self._timeouts.clear()
        if count >= SLOWLORIS_TIMEOUTS:
            self.node.threats.record(src, "slowloris")
            if self._fresh("attack_detected", "slowloris", src):
                data = {"attack_type": "slowloris", "source_ip": src, "action": "timed_out"}
                self._measured_event("attack_detected", data)

    # -- events ------------------------------------------------------------------
    def _fresh(self, event: str, key: str, src: str) -> bool:
        now = _now()
        mark = (event, key, src)
        if now - self._last_event.get(mark, -1e9) < EVENT_DEDUP_SECONDS:
            return False
        if len(self._last_event) > 20000:
            self._last_event.clear()
        self._last_event[mark] = now
        return True

    def attack(self, attack_type: str, src: str, rate: int, action: str) -> None:
        if self._fresh("attack_detected", attack_type, src):
            data = {"attack_type": attack_type, "source_ip": src, "packets_per_second": rate, "action": action}
            self.node.raise_event("attack_detected", data)

    def _measured_event(self, event: str, data: dict[str, Any]) -> None:
        """Raise `event` once the source's rate is read from the stick table (a log line has none)."""

        async def measure() -> None:
            try:
                rate = await self.source_rate(data["source_ip"])
            except (OSError, TimeoutError):  # HAProxy is being restarted: the event still goes out
                rate = 0
            self.node.raise_event(event, {**data, "packets_per_second": rate})

        self.node.tasks.start(measure(), name=f"{event}-{data['source_ip']}")

    def remember(self, payload: dict[str, Any]) -> None:
        self._events.append(payload)

    def recent_events(self, limit: int) -> list[dict[str, Any]]:
        return list(self._events)[-limit:]

    # -- views -----------------------------------------------------------------
    async def _fresh_stats(self) -> None:
        if self.polls == 0 or not self.frontend:
            await self.poll()

    async def status(self) -> dict[str, Any]:
        await self._fresh_stats()
        node = self.node
        healthy = node.proc.running and not node.draining
        return {
            "status": "running" if node.proc.running else "stopped",
            "mode": node.settings.mode,
            "uptime_seconds": int(time.time() - node.started),
            "connections": {"active": _int(self.frontend, "scur"), "total": node.counters["connections"].total},
            "health": "healthy" if healthy else ("draining" if node.draining else "unhealthy"),
            "node_id": node.node_id,
            "address": node.address,
            "syn_cookies": _syncookies(),
            "children": node.children(),
        }

    async def stats(self) -> dict[str, Any]:
        await self._fresh_stats()
        node, fe = self.node, self.frontend
        rate = _int(fe, "req_rate") if node.settings.mode == "l7" else _int(fe, "rate")
        return {
            "packets_processed": node.counters["requests"].total,
            "attacks_blocked": node.counters["blocked"].total,
            "requests_per_second": rate,
            "latency_ms": float(_int(self.backend, "rtime")),
            "cpu_percent": round(self.cpu_percent, 2),
            "memory_mb": round(self.memory_bytes / (1024 * 1024), 2),
        }

    async def heartbeat(self) -> dict[str, Any]:
        stats = await self.stats()
        return {
            **self.node.describe(),
            "status": "draining" if self.node.draining else ("healthy" if self.node.proc.running else "unhealthy"),
            "load": round(self.cpu_percent / 100.0, 3),
            "connections_active": _int(self.frontend, "scur"),
            "stats": stats,
            "served_total": self.node.counters["served"].total,
            "children": self.node.children(),
        }

    def threat_summary(self) -> dict[str, Any]:
        book = self.node.threats
        return {
            "active_threats": len(book.active(window=float(self.node.settings.ban_seconds))),
            "sources": {src: {"attacks": r.attacks, "type": r.attack_type} for src, r in book.sources.items()},
            "attack_types": dict(book.attack_types),
        }


def _syncookies() -> str:
    try:
        value = Path("/proc/sys/net/ipv4/tcp_syncookies").read_text().strip()
    except OSError:
        return "unknown"
    return {"0": "off", "1": "on_overflow", "2": "always"}.get(value, value)
