"""WAF categories (Squid url_regex ACLs), their counters, rule testing and the internal alert hook."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import duckdb
from fastapi import APIRouter

from actors.webfilter import crsrules, waf
from actors.webfilter.logparse import mask_ip
from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter import analytics, notify
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, errors, ok
from deployments.webfilter.routes.common import AlertSender, Ctx, Peer, User
from deployments.webfilter.schemas import AlertBody, Envelope, TestRuleBody, WafToggleBody
from deployments.webfilter.secretbox import SecretUnreadable
from deployments.webfilter.state import WebfilterState
from rayfleet.logs import get_logger
from rayfleet.state import call

router = APIRouter(tags=["waf"], responses=AUTH_ERRORS)
log = get_logger("webfilter")


def _reset_at(context: WebfilterState) -> float:
    return float(context.store.meta("counters_reset_at", "0") or 0)


@router.get("/api/waf/stats", response_model=Envelope, summary="Blocks per WAF category since the last reset")
async def waf_stats(context: Ctx, user: User) -> dict[str, Any]:
    since = await asyncio.to_thread(_reset_at, context)
    counts = await analytics.waf_counts(context, since)
    enabled = await context.db(context.store.waf_categories)
    settings = await context.db(context.store.settings)
    crs = settings["waf_engine"] == "crs"
    categories = [{"name": c, "enabled": enabled.get(c, False), "blocked": counts.get(c, 0)} for c in waf.CATEGORIES]
    body: dict[str, Any] = {
        "enabled": settings["enable_waf"],
        "engine": "crs" if crs else "squid url_regex",
        "since": since,
        "total_blocked": sum(counts.values()),
        "categories": categories,
    }
    if crs:
        generic = crsrules.GENERIC
        categories.append({"name": generic, "enabled": settings["enable_waf"], "blocked": counts.get(generic, 0)})
        report = await call(context.proxy, ProxyOwner.crs_report)
        if settings["gdpr_mode"]:  # the audit log has whole addresses; answers follow the logs' masking
            report["recent"] = [{**r, "client_ip": mask_ip(r["client_ip"])} for r in report["recent"]]
        body["crs"] = {
            "paranoia_level": settings["waf_paranoia_level"],
            "anomaly_threshold": settings["waf_anomaly_threshold"],
            "exclusions": settings["waf_exclusions"],
            **report,
        }
    return ok(body)


@router.get("/api/waf/categories", response_model=Envelope, summary="WAF categories and their state")
async def waf_categories(context: Ctx, user: User) -> dict[str, Any]:
    enabled = await context.db(context.store.waf_categories)
    return ok(
        [
            {"name": c, "rules": len(p), "enabled": enabled.get(c, False), "description": waf.DESCRIPTIONS[c]}
            for c, p in waf.CATEGORIES.items()
        ]
    )


@router.post(
    "/api/waf/categories/toggle", response_model=Envelope, responses=errors(404), summary="Enable or disable a category"
)
async def waf_toggle(context: Ctx, ip: Peer, body: WafToggleBody, user: User) -> dict[str, Any]:
    name = body.category.upper()
    if name not in waf.CATEGORIES:
        raise ApiError(404, f"unknown WAF category {body.category!r}")
    await context.db(context.store.set_waf_category, name, body.enabled)
    await context.db(context.store.audit, user.username, ip, "waf.toggle", f"{name}={body.enabled}")
    return ok({"category": name, "enabled": body.enabled}, proxy=await context.sync_proxy())


def _check_regex(regex: str) -> None:
    """Compile with RE2 (what the test runs on): linear time, so no catastrophic backtracking."""
    try:
        duckdb.connect().execute("SELECT regexp_matches('', ?)", [regex]).fetchall()
    except duckdb.Error as exc:
        raise ApiError(400, f"invalid regex: {str(exc).splitlines()[0][:200]}") from None


@router.post(
    "/api/waf/test-rule", response_model=Envelope, responses=errors(400), summary="Evaluate a regex over recent traffic"
)
async def waf_test_rule(context: Ctx, body: TestRuleBody, user: User) -> dict[str, Any]:
    await asyncio.to_thread(_check_regex, body.regex)
    (rows,) = await analytics.run(
        context,
        (
            f"WITH recent AS (SELECT url FROM logs WHERE {analytics.NEWEST.format(n=10000)} AND ts >= make_timestamp(?)) "
            "SELECT count(*), count(*) FILTER (regexp_matches(url, ?, 'i')), "
            "list(url) FILTER (regexp_matches(url, ?, 'i')) FROM recent",
            [int((time.time() - body.hours * 3600) * 1_000_000), body.regex, body.regex],
        ),
    )
    scanned, matched, examples = rows[0]
    return ok(
        {
            "regex": body.regex,
            "hours": body.hours,
            "scanned": int(scanned),
            "matched": int(matched),
            "examples": list(examples or [])[:50],
            "would_block": int(matched) > 0,
            "engine": "RE2 (linear time)",
        }
    )


@router.post("/api/counters/reset", response_model=Envelope, summary="Reset the WAF block counters")
async def counters_reset(context: Ctx, ip: Peer, user: User) -> dict[str, Any]:
    now = time.time()
    await context.db(context.store.set_meta, "counters_reset_at", repr(now))
    await call(context.proxy, ProxyOwner.crs_reset, now)
    await context.db(context.store.audit, user.username, ip, "counters.reset")
    return ok({"reset_at": now})


@router.post("/api/internal/alert", response_model=Envelope, summary="WAF block notification (scoped token)")
async def internal_alert(context: Ctx, ip: Peer, body: AlertBody, who: AlertSender) -> dict[str, Any]:
    detail = f"{body.category}: {body.message} client={body.client_ip} url={body.url}"
    await context.db(context.store.audit, who.username, ip, "internal.alert", detail)
    sent: dict[str, dict[str, Any]] = {}
    try:
        settings = await context.db(context.store.settings, True)
    except SecretUnreadable as exc:
        log.warning("WAF alert not forwarded", extra={"reason": str(exc)})
        return ok({"recorded": True, "notified": sent, "notify_error": str(exc)})
    if settings["enable_notifications"]:
        event = {"event": "waf_alert", **body.model_dump()}
        sent = await notify.send_all(settings, f"WAF alert: {body.category}", body.message or detail, event)
    return ok({"recorded": True, "notified": sent})
