"""The web filter's CRS inspection tier: `rayfleet.crs` in forward-proxy mode behind Squid.

Squid sends every plain-HTTP request to the tier as a `cache_peer` parent (`squidconf.crs_lines`);
nginx + ModSecurity + CRS inspects it (URL, headers and the body, bounded) and forwards it to the host
of its request line, resolved through the web filter's own dnsmasq (never the machine's resolver).
The tier's audit log says which rules refused what; `CrsHits` counts them.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from actors.webfilter import crsrules
from actors.webfilter.squidconf import Policy
from rayfleet.crs.audit import AuditTail
from rayfleet.crs.config import CrsPaths, CrsPolicy, Forward, Upstream

BODY_LIMIT = 1_048_576  # bytes of a request body inspected; the rest of a larger body passes uninspected
MAX_BODY = 1 << 30  # nginx refuses bodies over this (an upload of more than 1 GiB through the proxy)


def tier_config(policy: Policy, port: int, resolver: str) -> tuple[CrsPolicy, Upstream]:
    """The tier's CRS policy and listener for the web filter's `policy` (its paranoia level, threshold,
    exclusions and the enabled categories' families)."""
    exclusions = tuple(sorted(set(policy.waf_exclusions)))
    crs = CrsPolicy(
        paranoia_level=policy.waf_paranoia_level,
        anomaly_threshold=policy.waf_anomaly_threshold,
        body_limit=BODY_LIMIT,
        body_limit_action="partial",
        max_body_bytes=MAX_BODY,
        exclusions=exclusions,
        extra_rules=crsrules.extra_rules(policy.waf_categories, exclusions),
    )
    return crs, Upstream(origin="", port=port, forward=Forward(resolver=resolver))


class CrsHits:
    """What the audit log of the tier at `root` says was refused since `since` (the start, or the last
    counter reset): counts per category and per CRS rule (the rules that scored, not the blocking
    evaluation), and the newest refusals."""

    def __init__(self, root: Path, keep: int = 50, clock: Callable[[], float] = time.time) -> None:
        self.tail = AuditTail(CrsPaths(root).audit_log)
        self.clock = clock
        self.since = clock()
        self.categories: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()
        self.recent: deque[dict[str, Any]] = deque(maxlen=keep)

    def reset(self, at: float) -> None:
        """Counters restart from `at`, now (`POST /api/counters/reset`): what the log holds so far is read
        and dropped, so the counts and the refusals listed are the ones logged after the reset."""
        self.read()
        self.since = at
        self.categories.clear()
        self.rules.clear()
        self.recent.clear()

    def read(self) -> dict[str, Any]:
        """Read what was logged since the last call, then the totals."""
        for block in self.tail.read():
            category = crsrules.category_of_block(block.rule_ids)
            self.categories[category] += 1
            fired = [r for r in block.rule_ids if not crsrules.blocking_rule(r)]
            self.rules.update(fired)
            self.recent.append(
                {
                    "at": self.clock(),
                    "client_ip": block.client_ip,
                    "method": block.method,
                    "uri": block.uri[:200],
                    "category": category,
                    "rules": fired,
                    "score": block.score,
                }
            )
        return {
            "since": self.since,
            "categories": dict(self.categories),
            "top_rules": [{"rule": r, "hits": n} for r, n in self.rules.most_common(20)],
            "recent": list(self.recent)[-10:],
        }
