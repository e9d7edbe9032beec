"""The node's CRS inspection tier (nginx + ModSecurity + OWASP CRS, `rayfleet.crs`) and what its
blocks feed back: the threat book, rule hits, `rule_triggered` events and blacklist bans.

HAProxy stays in front (bans, rate limits, stick tables, the client's address) and sends what
it lets through to the tier on a loopback port; the tier answers 403 itself for what CRS refuses
and proxies the rest to the origin. Its JSON audit log names the client and the rule ids.
"""

from __future__ import annotations

import shutil
import time
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from actors.mitigation.accounting import ThreatBook
from actors.mitigation.settings import NodeSettings, WafSettings
from rayfleet.crs.audit import AuditBlock, AuditTail
from rayfleet.crs.config import CrsPaths, CrsPolicy, Upstream
from rayfleet.crs.process import CrsTier
from rayfleet.crs.widening import widened_injection_rules
from rayfleet.logs import get_logger
from rayfleet.supervisor import Status

log = get_logger("mitigation")

MAX_TRACKED_SOURCES = 10000
EVENT_DEDUP_SECONDS = 10.0


def crs_policy(waf: WafSettings) -> CrsPolicy:
    return CrsPolicy(
        paranoia_level=waf.paranoia_level,
        anomaly_threshold=waf.anomaly_threshold,
        body_limit=waf.body_limit,
        body_limit_action=waf.body_limit_action,
        exclusions=tuple(waf.exclusions),
        extra_rules=widened_injection_rules(waf.exclusions),
    )


class FedNode(Protocol):
    """What the feedback updates on its node (`MitigationNode`)."""

    settings: NodeSettings
    threats: ThreatBook
    builtin_hits: dict[str, int]
    blacklist: dict[str, dict[str, Any]]

    def raise_event(self, event: str, data: dict[str, Any]) -> None: ...

    async def add_blacklist(
        self, ip: str, reason: str, duration_seconds: int, source: str = "api"
    ) -> dict[str, Any]: ...


class Inspection:
    """The tier of one node: started, re-configured and stopped with the node's settings."""

    def __init__(self, root: Path, node_id: str) -> None:
        self.paths = CrsPaths(root)
        self.name = f"nginx-crs-{node_id}"
        self.tier: CrsTier | None = None
        self.tail = AuditTail(self.paths.audit_log)
        self._blocks: dict[str, deque[float]] = {}
        self._events: dict[str, float] = {}

    @property
    def port(self) -> int:
        return self.tier.upstream.port if self.tier is not None else 0

    async def configure(self, settings: NodeSettings, port: int) -> None:
        """Make the tier match `settings`: started (on `port`), re-configured, or stopped. A policy
        nginx or ModSecurity refuses raises `CrsError` and leaves a running tier as it was."""
        if not settings.crs:
            await self.stop()
            return
        policy, upstream = crs_policy(settings.waf), Upstream(origin=settings.origin, port=port)
        if self.tier is None:
            tier = CrsTier(self.paths, policy, upstream, name=self.name)
            await tier.start()
            self.tier = tier
        elif (self.tier.policy, self.tier.upstream) != (policy, upstream):
            await self.tier.apply(policy, upstream)

    async def stop(self) -> None:
        if self.tier is not None:
            tier, self.tier = self.tier, None
            await tier.stop()

    async def close(self) -> None:
        """Stop the tier and remove its folder (the node is going away)."""
        await self.stop()
        shutil.rmtree(self.paths.root, ignore_errors=True)

    def kill(self) -> None:
        if self.tier is not None:
            self.tier.kill()

    def statuses(self) -> list[Status]:
        return [self.tier.status()] if self.tier is not None else []

    def process_ids(self) -> list[int]:
        return self.tier.process_ids() if self.tier is not None else []

    async def feed(self, node: FedNode) -> None:
        """Read the blocks logged since the last call into the node's books (and bans)."""
        if self.tier is None:
            return
        for block in self.tail.read():
            await self._feed_one(node, block)

    async def _feed_one(self, node: FedNode, block: AuditBlock) -> None:
        src = block.client_ip
        if not src:
            return
        node.threats.record(src, "waf")
        for rule_id in block.rule_ids:
            key = f"crs-{rule_id}"
            node.builtin_hits[key] = node.builtin_hits.get(key, 0) + 1
        if self._fresh(src):
            node.raise_event(
                "rule_triggered",
                {
                    "attack_type": "waf",
                    "source_ip": src,
                    "packets_per_second": 0,
                    "action": "blocked",
                    "rule_id": ",".join(block.rule_ids) or "crs",
                    "severity": "critical",
                    "anomaly_score": block.score,
                },
            )
        await self._maybe_ban(node, block)

    def _fresh(self, src: str) -> bool:
        """At most one `rule_triggered` event per source every EVENT_DEDUP_SECONDS."""
        now = time.monotonic()
        if now - self._events.get(src, -1e9) < EVENT_DEDUP_SECONDS:
            return False
        if len(self._events) > MAX_TRACKED_SOURCES:
            self._events.clear()
        self._events[src] = now
        return True

    async def _maybe_ban(self, node: FedNode, block: AuditBlock) -> None:
        """`ban_after` blocks of one source within `ban_seconds` blacklist it for `ban_seconds`."""
        settings = node.settings
        if settings.waf.ban_after == 0 or block.client_ip in node.blacklist:
            return
        now = time.monotonic()
        if len(self._blocks) > MAX_TRACKED_SOURCES:
            self._blocks.clear()
        times = self._blocks.setdefault(block.client_ip, deque(maxlen=settings.waf.ban_after))
        times.append(now)
        if len(times) < settings.waf.ban_after or now - times[0] > settings.ban_seconds:
            return
        rules = ",".join(block.rule_ids) or "949110"
        reason = f"waf: {len(times)} requests refused by CRS (last: rules {rules}, score {block.score})"
        try:
            await node.add_blacklist(block.client_ip, reason[:300], settings.ban_seconds, source="waf")
        except Exception as exc:  # a data plane being restarted: the next block tries again
            log.warning("waf ban not applied", extra={"source_ip": block.client_ip, "error": repr(exc)})
            return
        del self._blocks[block.client_ip]
