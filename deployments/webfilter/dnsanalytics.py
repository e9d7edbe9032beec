"""DNS query analytics: DuckDB queries over `dns_logs` (one row per query dnsmasq answered, with the rule
that decided a blocked one). The summaries go through `LogStore.answer` with hour-aligned bounds, so they
are memoised until the next batch like the HTTP rollups."""

from __future__ import annotations

from typing import Any

from deployments.webfilter.analytics import _iso, _since_hour, answer, run, where
from deployments.webfilter.state import WebfilterState

COLUMNS = "id, ts, client, name, qtype, outcome, answer, upstream, blocked, rule, source, group_name"
KEYS = (
    *("id", "timestamp", "client_ip", "name", "qtype", "outcome", "answer", "upstream", "blocked", "rule"),
    *("source", "group"),
)


async def page(
    context: WebfilterState,
    limit: int,
    offset: int,
    filters: dict[str, Any],
) -> tuple[list[dict[str, Any]], int]:
    """DNS rows newest first; `filters`: blocked, client, outcome, search (part of the name)."""
    cond, args = where(
        {
            "blocked = ?": filters.get("blocked"),
            "client = ?": filters.get("client") or None,
            "outcome = ?": filters.get("outcome") or None,
            "contains(name, ?)": filters.get("search") or None,
        }
    )
    rows, total = await run(
        context,
        (f"SELECT {COLUMNS} FROM dns_logs WHERE {cond} ORDER BY id DESC LIMIT ? OFFSET ?", [*args, limit, offset]),
        (f"SELECT count(*) FROM dns_logs WHERE {cond}", args),
    )
    items = [dict(zip(KEYS, row, strict=True)) for row in rows]
    for item in items:
        item["timestamp"] = _iso(item["timestamp"])
    return items, int(total[0][0])


async def stats(context: WebfilterState, hours: int, limit: int = 10) -> dict[str, Any]:
    """Queries in the window (from the start of the hour `hours` ago): totals, per outcome, the most blocked
    names, the rules (entry and source) that blocked most, the busiest clients."""
    since = [_since_hour(hours)]
    window = "FROM dns_logs WHERE ts >= make_timestamp(?)"
    totals, outcomes, names, rules, clients = await answer(
        context,
        (f"SELECT count(*), count(*) FILTER (blocked) {window}", since),
        (f"SELECT outcome, count(*) {window} GROUP BY 1 ORDER BY 2 DESC, 1", since),
        (f"SELECT name, count(*) n {window} AND blocked GROUP BY 1 ORDER BY n DESC, name LIMIT ?", [*since, limit]),
        (
            f"SELECT rule, source, count(*) n {window} AND blocked GROUP BY 1, 2 ORDER BY n DESC, rule LIMIT ?",
            [*since, limit],
        ),
        (
            f"SELECT client, count(*) n, count(*) FILTER (blocked) {window} GROUP BY 1 ORDER BY n DESC, client LIMIT ?",
            [*since, limit],
        ),
    )
    return {
        "hours": hours,
        "total_count": int(totals[0][0]),
        "blocked_count": int(totals[0][1]),
        "by_outcome": {outcome: int(n) for outcome, n in outcomes},
        "top_blocked_names": [{"name": name, "count": int(n)} for name, n in names],
        "top_rules": [{"rule": rule, "source": source, "count": int(n)} for rule, source, n in rules],
        "top_clients": [{"client_ip": c, "queries": int(n), "blocked": int(b)} for c, n, b in clients],
    }
