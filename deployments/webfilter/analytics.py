"""Analytics as DuckDB queries over the log store's rollups (UTC; windows end now).

The rollup questions go through `LogStore.answer`: one snapshot per question, memoised until the
next batch. Their time bounds are aligned to the rollup's bucket here (the start of the hour, minute
or day), which is what the SQL compared against anyway, so a memoised answer stays exact within
the bucket."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from actors.webfilter.logstore import LogStore
from deployments.webfilter.state import WebfilterState
from rayfleet.state import call

Rows = list[tuple[Any, ...]]

SHADOW_IT: dict[str, tuple[str, str]] = {
    "dropbox.com": ("Dropbox", "File sharing"),
    "wetransfer.com": ("WeTransfer", "File sharing"),
    "mega.nz": ("MEGA", "File sharing"),
    "drive.google.com": ("Google Drive", "File sharing"),
    "box.com": ("Box", "File sharing"),
    "onedrive.live.com": ("OneDrive", "File sharing"),
    "slack.com": ("Slack", "Messaging"),
    "discord.com": ("Discord", "Messaging"),
    "telegram.org": ("Telegram", "Messaging"),
    "web.whatsapp.com": ("WhatsApp Web", "Messaging"),
    "zoom.us": ("Zoom", "Video"),
    "teams.microsoft.com": ("Teams", "Video"),
    "openai.com": ("OpenAI", "AI assistants"),
    "chatgpt.com": ("ChatGPT", "AI assistants"),
    "claude.ai": ("Claude", "AI assistants"),
    "gemini.google.com": ("Gemini", "AI assistants"),
    "github.com": ("GitHub", "Code hosting"),
    "gitlab.com": ("GitLab", "Code hosting"),
    "pastebin.com": ("Pastebin", "Paste sites"),
    "gist.github.com": ("GitHub Gist", "Paste sites"),
    "notion.so": ("Notion", "Productivity"),
    "trello.com": ("Trello", "Productivity"),
    "airtable.com": ("Airtable", "Productivity"),
    "nordvpn.com": ("NordVPN", "VPN and anonymisers"),
    "protonvpn.com": ("ProtonVPN", "VPN and anonymisers"),
    "torproject.org": ("Tor Project", "VPN and anonymisers"),
    "anydesk.com": ("AnyDesk", "Remote access"),
    "teamviewer.com": ("TeamViewer", "Remote access"),
    "ngrok.io": ("ngrok", "Remote access"),
}
# The newest n rows by id (ids only grow): DuckDB's zone maps skip every older row group, so "recent"
# questions cost the same at 5M rows as at 50k.
NEWEST = "id > (SELECT coalesce(max(id), 0) FROM logs) - {n}"
DNS_TOTALS = "SELECT count(*), count(*) FILTER (blocked) FROM dns_logs"
THREAT_LABELS = {
    "domain_blacklist": "Domain blacklist",
    "ip_blacklist": "IP blacklist",
    "egress_default_deny": "Egress default-deny",
    "direct_ip": "Direct IP",
    "source_blocked": "Blocked source",
    "client_not_allowed": "Client not allowed",
}


def _micros(epoch: float) -> int:
    return int(epoch * 1_000_000)


def _since(hours: float) -> int:
    return _micros(time.time() - hours * 3600)


def _since_hour(hours: int) -> int:
    """The start of the UTC hour `hours` ago (what `date_trunc('hour', ...)` of `_since` gives)."""
    return _micros((int(time.time()) - hours * 3600) // 3600 * 3600)


def _bucket(seconds: int) -> int:
    """The start of the current UTC minute, hour or day (`seconds` = 60, 3600, 86400)."""
    return _micros(int(time.time()) // seconds * seconds)


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat() + "Z"
    return str(value)


async def run(context: WebfilterState, *items: tuple[str, list[Any]]) -> list[Rows]:
    return await call(context.logs, LogStore.queries, list(items))


async def answer(context: WebfilterState, *items: tuple[str, list[Any]]) -> list[Rows]:
    """Rollup questions with bucket-aligned parameters: one snapshot, memoised until the next batch."""
    return await call(context.logs, LogStore.answer, list(items))


def where(filters: dict[str, Any]) -> tuple[str, list[Any]]:
    """A WHERE condition of the filters whose value is not None (each condition has one `?`), and its values."""
    used = {cond: value for cond, value in filters.items() if value is not None}
    return " AND ".join(["1=1", *used]), list(used.values())


async def logs_page(
    context: WebfilterState, limit: int, offset: int, blocked: bool | None, client: str | None, search: str | None
) -> tuple[list[dict[str, Any]], int]:
    cond, args = where({"blocked = ?": blocked, "client = ?": client or None, "contains(url, ?)": search or None})
    rows, total = await run(
        context,
        (
            f"SELECT id, ts, client, method, url, host, status, squid_status, bytes_out, elapsed_ms, blocked, rule, "
            f"agent FROM logs WHERE {cond} ORDER BY id DESC LIMIT ? OFFSET ?",
            [*args, limit, offset],
        ),
        (f"SELECT count(*) FROM logs WHERE {cond}", args),
    )
    keys = (
        "id",
        "timestamp",
        "client_ip",
        "method",
        "destination",
        "host",
        "status",
        "squid_status",
        "bytes",
        "elapsed_ms",
        "blocked",
        "rule",
        "user_agent",
    )
    items = [dict(zip(keys, r, strict=True)) for r in rows]
    for item in items:
        item["timestamp"] = _iso(item["timestamp"])
    return items, int(total[0][0])


async def stats(context: WebfilterState) -> dict[str, Any]:
    totals, rules, dns = await answer(
        context,
        ("SELECT coalesce(sum(requests), 0), coalesce(sum(blocked), 0) FROM r_minute", []),
        ("SELECT rule, sum(requests) FROM r_rule GROUP BY 1", []),
        (DNS_TOTALS, []),
    )
    by_rule = {r: int(n) for r, n in rules}
    return {
        "total_count": int(totals[0][0]),
        "blocked_count": int(totals[0][1]),
        "ip_blocks_count": by_rule.get("ip_blacklist", 0),
        "domain_blocks_count": by_rule.get("domain_blacklist", 0),
        "waf_blocks_count": sum(n for r, n in by_rule.items() if r.startswith("waf:")),
        "by_rule": by_rule,
        "last_import": context.store.meta("last_import") or None,
        "by_source": {
            "http": {"total_count": int(totals[0][0]), "blocked_count": int(totals[0][1])},
            "dns": {"total_count": int(dns[0][0]), "blocked_count": int(dns[0][1])},
        },
    }


async def timeline(context: WebfilterState, hours: int) -> list[dict[str, Any]]:
    now = int(time.time())
    start = _micros((now // 3600 - hours + 1) * 3600)
    (rows,) = await answer(
        context,
        (
            "WITH s AS (SELECT unnest(generate_series(make_timestamp(?), date_trunc('hour', make_timestamp(?)), "
            "INTERVAL 1 HOUR)) h), r AS (SELECT date_trunc('hour', minute) h, sum(requests) n, sum(blocked) b "
            "FROM r_minute WHERE minute >= make_timestamp(?) GROUP BY 1) "
            "SELECT s.h, coalesce(r.n, 0), coalesce(r.b, 0) FROM s LEFT JOIN r USING (h) ORDER BY 1",
            [start, _micros(now // 3600 * 3600), start],
        ),
    )
    return [{"time": _iso(h), "total": int(n), "blocked": int(b)} for h, n, b in rows]


PERIODS: dict[str, tuple[str, int, int]] = {
    "hour": ("minute", 60, 60),
    "day": ("hour", 24, 3600),
    "week": ("day", 7, 86400),
    "month": ("day", 30, 86400),
}


async def traffic(context: WebfilterState, period: str) -> dict[str, Any]:
    unit, buckets, seconds = PERIODS[period]
    now = int(time.time())
    start = _micros((now // seconds - buckets + 1) * seconds)
    (rows,) = await answer(
        context,
        (
            f"WITH s AS (SELECT unnest(generate_series(make_timestamp(?), date_trunc('{unit}', make_timestamp(?)), "
            f"INTERVAL 1 {unit})) b), r AS (SELECT date_trunc('{unit}', minute) b, sum(requests) n, sum(blocked) x, "
            "sum(bytes_in) i, sum(bytes_out) o FROM r_minute WHERE minute >= make_timestamp(?) GROUP BY 1) "
            "SELECT s.b, coalesce(n, 0), coalesce(x, 0), coalesce(i, 0), coalesce(o, 0) FROM s LEFT JOIN r USING (b) "
            "ORDER BY 1",
            [start, _micros(now // seconds * seconds), start],
        ),
    )
    return {
        "period": period,
        "labels": [_iso(r[0]) for r in rows],
        "requests": [int(r[1]) for r in rows],
        "blocked": [int(r[2]) for r in rows],
        "inbound": [int(r[3]) for r in rows],
        "outbound": [int(r[4]) for r in rows],
    }


async def clients(context: WebfilterState, hours: int, limit: int) -> dict[str, Any]:
    since = _since_hour(hours)
    rows, total = await answer(
        context,
        (
            "SELECT client, sum(requests) n, sum(blocked) b, max(last_seen) FROM r_client "
            "WHERE hour >= make_timestamp(?) GROUP BY 1 ORDER BY n DESC, client LIMIT ?",
            [since, limit],
        ),
        ("SELECT count(DISTINCT client) FROM r_client WHERE hour >= make_timestamp(?)", [since]),
    )
    items = [{"ip_address": c, "requests": int(n), "blocked": int(b), "last_seen": _iso(s)} for c, n, b, s in rows]
    return {"clients": items, "total_clients": int(total[0][0])}


async def domains(context: WebfilterState, hours: int, limit: int, blocked_only: bool = False) -> dict[str, Any]:
    since = _since_hour(hours)
    having = "HAVING sum(blocked) > 0" if blocked_only else ""
    order = "b DESC" if blocked_only else "n DESC"
    rows, total = await answer(
        context,
        (
            f"SELECT host, sum(requests) n, sum(blocked) b FROM r_domain WHERE hour >= make_timestamp(?) "
            f"GROUP BY 1 {having} ORDER BY {order}, host LIMIT ?",
            [since, limit],
        ),
        ("SELECT count(DISTINCT host) FROM r_domain WHERE hour >= make_timestamp(?)", [since]),
    )
    items = [{"domain": h, "requests": int(n), "blocked": int(b), "allowed": int(n - b)} for h, n, b in rows]
    return {"domains": items, "total_domains": int(total[0][0])}


async def top_domains(context: WebfilterState, hours: int, limit: int) -> list[dict[str, Any]]:
    """Grouped by registrable domain (the last two labels; no public-suffix list)."""
    (rows,) = await answer(
        context,
        (
            "SELECT array_to_string(list_slice(string_split(host, '.'), -2, -1), '.') d, sum(requests) n, "
            "sum(blocked) b, count(DISTINCT host) FROM r_domain WHERE hour >= make_timestamp(?) "
            "AND host <> '' GROUP BY 1 ORDER BY n DESC, d LIMIT ?",
            [_since_hour(hours), limit],
        ),
    )
    return [{"domain": d, "requests": int(n), "blocked": int(b), "hosts": int(h)} for d, n, b, h in rows]


async def shadow_it(context: WebfilterState, hours: int) -> list[dict[str, Any]]:
    (rows,) = await answer(
        context,
        (
            "SELECT host, sum(requests) FROM r_domain WHERE hour >= make_timestamp(?) GROUP BY 1",
            [_since_hour(hours)],
        ),
    )
    found: dict[str, dict[str, Any]] = {}
    for host, count in rows:
        for domain, (name, category) in SHADOW_IT.items():
            if host == domain or host.endswith("." + domain):
                entry = found.setdefault(domain, {"name": name, "domain": domain, "category": category, "requests": 0})
                entry["requests"] += int(count)
    return sorted(found.values(), key=lambda e: -e["requests"])


async def user_agents(context: WebfilterState, hours: int) -> dict[str, Any]:
    since = _since_hour(hours)
    agents, methods = await answer(
        context,
        (
            "SELECT agent, sum(requests) n FROM r_agent WHERE hour >= make_timestamp(?) "
            "GROUP BY 1 ORDER BY n DESC LIMIT 30",
            [since],
        ),
        (
            "SELECT method, sum(requests) n FROM r_agent WHERE hour >= make_timestamp(?) GROUP BY 1 ORDER BY n DESC",
            [since],
        ),
    )
    return {
        "user_agents": [{"user_agent": a, "requests": int(n)} for a, n in agents],
        "methods": [{"method": m, "requests": int(n)} for m, n in methods],
    }


async def file_extensions(context: WebfilterState, hours: int) -> list[dict[str, Any]]:
    (rows,) = await run(
        context,
        (
            f"WITH recent AS (SELECT url FROM logs WHERE {NEWEST.format(n=10000)} AND ts >= make_timestamp(?)), "
            "ext AS (SELECT lower(regexp_extract(split_part(split_part(url, '?', 1), '#', 1), "
            "'\\.([A-Za-z0-9]{1,10})$', 1)) e FROM recent) "
            "SELECT e, count(*) n FROM ext WHERE e <> '' GROUP BY 1 ORDER BY n DESC, e LIMIT 30",
            [_since(hours)],
        ),
    )
    return [{"extension": e, "count": int(n)} for e, n in rows]


def _threat(rule: str) -> str:
    if rule.startswith("waf:"):
        return "WAF: " + rule[4:]
    return THREAT_LABELS.get(rule, rule)


async def dashboard(context: WebfilterState) -> dict[str, Any]:
    day = _since_hour(24)
    midnight = _bucket(86400)
    totals, today, blocked_domains, top_clients, rules, recent, dns = await answer(
        context,
        ("SELECT coalesce(sum(requests), 0), coalesce(sum(blocked), 0) FROM r_minute", []),
        (
            "SELECT coalesce(sum(requests), 0), coalesce(sum(blocked), 0) FROM r_minute "
            "WHERE minute >= make_timestamp(?)",
            [midnight],
        ),
        (
            "SELECT host, sum(blocked) b FROM r_domain WHERE hour >= make_timestamp(?) "
            "GROUP BY 1 HAVING b > 0 ORDER BY b DESC, host LIMIT 10",
            [day],
        ),
        (
            "SELECT client, sum(requests) n, sum(blocked) FROM r_client WHERE hour >= make_timestamp(?) "
            "GROUP BY 1 ORDER BY n DESC, client LIMIT 10",
            [day],
        ),
        (
            "SELECT rule, sum(requests) n FROM r_rule WHERE hour >= make_timestamp(?) GROUP BY 1 ORDER BY n DESC",
            [day],
        ),
        (
            "SELECT ts, client, url, rule FROM recent_blocks ORDER BY id DESC LIMIT 10",
            [],
        ),
        (DNS_TOTALS + " WHERE ts >= make_timestamp(?)", [day]),
    )
    return {
        "generated_at": _iso(dt.datetime.now(dt.UTC)),
        "totals": {"requests": int(totals[0][0]), "blocked": int(totals[0][1])},
        "today": {"requests": int(today[0][0]), "blocked": int(today[0][1]), "day_starts": "00:00 UTC"},
        "top_blocked_domains_24h": [{"domain": h, "blocked": int(b)} for h, b in blocked_domains],
        "top_clients_24h": [{"ip_address": c, "requests": int(n), "blocked": int(b)} for c, n, b in top_clients],
        "threat_categories_24h": [{"category": _threat(r), "rule": r, "count": int(n)} for r, n in rules],
        "recent_blocks": [{"timestamp": _iso(t), "client_ip": c, "destination": u, "rule": r} for t, c, u, r in recent],
        "dns_24h": {"queries": int(dns[0][0]), "blocked": int(dns[0][1])},
    }


async def waf_counts(context: WebfilterState, since_epoch: float) -> dict[str, int]:
    (rows,) = await run(
        context,
        (
            "SELECT rule, count(*) FROM logs WHERE rule LIKE 'waf:%' AND ts >= make_timestamp(?) GROUP BY 1",
            [_micros(since_epoch)],
        ),
    )
    return {r[4:]: int(n) for r, n in rows}


async def recent_destinations(context: WebfilterState, hours: int, limit: int) -> list[str]:
    (rows,) = await run(
        context,
        ("SELECT url FROM logs WHERE ts >= make_timestamp(?) ORDER BY id DESC LIMIT ?", [_since(hours), limit]),
    )
    return [r[0] for r in rows]
