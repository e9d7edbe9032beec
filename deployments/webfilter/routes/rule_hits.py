"""Per-entry hit counts of the domain blacklist: `GET /api/domain-blacklist/hits`.

The logs say which rule class refused a request (`domain_blacklist`); the proxy actor, which holds the
rules in force (the list and every subscription's copy), says which entry covers each blocked host
(`actors/webfilter/rulehits.py`), and the requests are summed per entry.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Query

from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter import analytics
from deployments.webfilter.errors import AUTH_ERRORS, ok
from deployments.webfilter.routes.common import SIGNED_IN, Ctx
from deployments.webfilter.schemas import Envelope
from rayfleet.state import call

router = APIRouter(tags=["lists"], dependencies=[SIGNED_IN], responses=AUTH_ERRORS)
MAX_HOSTS = 10_000  # the blocked hosts considered, most requests first

BLOCKED_HOSTS = (
    "SELECT host, count(*) AS hits, max(ts) AS last_hit FROM logs WHERE rule = 'domain_blacklist' "
    "AND ts >= make_timestamp(?) AND host IS NOT NULL GROUP BY host ORDER BY hits DESC, host LIMIT ?"
)
BLOCKED_TOTAL = "SELECT count(*) FROM logs WHERE rule = 'domain_blacklist' AND ts >= make_timestamp(?)"


def _per_rule(rows: list[tuple[Any, ...]], decisions: list[tuple[str, str] | None]) -> list[dict[str, Any]]:
    totals: dict[tuple[str, str], dict[str, Any]] = {}
    for (_, hits, last_hit), decision in zip(rows, decisions, strict=True):
        if decision is None:
            continue
        entry = totals.setdefault(decision, {"rule": decision[0], "source": decision[1], "hits": 0, "hosts": 0})
        entry["hits"] += int(hits)
        entry["hosts"] += 1
        entry["last_hit"] = max(entry.get("last_hit") or last_hit, last_hit)
    for entry in totals.values():  # DuckDB timestamps are UTC without a zone
        entry["last_hit"] = entry["last_hit"].replace(tzinfo=None).isoformat() + "Z"
    return sorted(totals.values(), key=lambda e: (-e["hits"], e["rule"]))


@router.get(
    "/api/domain-blacklist/hits",
    response_model=Envelope,
    summary="Requests refused per domain blacklist entry (and subscription entry)",
)
async def domain_rule_hits(
    context: Ctx,
    hours: int = Query(168, ge=1, le=720, description="window ending now (UTC)"),
    limit: int = Query(100, ge=1, le=1000),
) -> dict[str, Any]:
    since = int((time.time() - hours * 3600) * 1_000_000)
    rows, ((total,),) = await analytics.run(context, (BLOCKED_HOSTS, [since, MAX_HOSTS]), (BLOCKED_TOTAL, [since]))
    decisions = await call(context.proxy, ProxyOwner.attribute, [str(row[0]) for row in rows])
    rules = _per_rule(rows, [(d[0], d[1]) if d else None for d in decisions])
    attributed = sum(e["hits"] for e in rules)
    return ok(
        {
            "rules": rules[:limit],
            "total_rules": len(rules),
            "blocked_requests": int(total),
            "unattributed_requests": int(total) - attributed,
            "hours": hours,
        }
    )
