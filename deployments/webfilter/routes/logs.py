"""Logs, analytics and the security score (GET unless noted)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

from fastapi import APIRouter, Query

from actors.webfilter.logstore import LogStore
from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter import analytics, cve
from deployments.webfilter.errors import AUTH_ERRORS, ok, page
from deployments.webfilter.routes.common import SIGNED_IN, Ctx, LogPage, Peer, gdpr_masked
from deployments.webfilter.schemas import SQLITE_MAX_INT, Envelope
from deployments.webfilter.settings import security_score
from rayfleet.state import call

router = APIRouter(tags=["logs and analytics"], dependencies=[SIGNED_IN], responses=AUTH_ERRORS)
Hours = Query(168, ge=1, le=720, description="window ending now (UTC)")


@router.get("/api/logs", response_model=Envelope, summary="Proxied requests, newest first (paginated)")
async def logs(context: Ctx, q: LogPage, search: str | None = Query(None, max_length=200)) -> dict[str, Any]:
    items, total = await analytics.logs_page(context, q.limit, q.offset, q.blocked, q.client_ip, search)
    return page(await gdpr_masked(context, items), total, q.limit, q.offset)


@router.get("/api/logs/stats", response_model=Envelope, summary="Totals by outcome and rule")
async def logs_stats(context: Ctx) -> dict[str, Any]:
    return ok(await analytics.stats(context))


@router.get("/api/logs/timeline", response_model=Envelope, summary="Requests and blocks per UTC hour")
async def logs_timeline(context: Ctx, hours: int = Query(24, ge=1, le=720)) -> dict[str, Any]:
    return ok(await analytics.timeline(context, hours))


@router.post("/api/logs/clear", response_model=Envelope, summary="Delete every log row")
async def logs_clear(context: Ctx, ip: Peer) -> dict[str, Any]:
    deleted = await call(context.logs, LogStore.clear, None)
    await context.db(context.store.audit, None, ip, "logs.clear", f"{deleted['http']} http, {deleted['dns']} dns")
    return ok({"deleted": deleted["http"], "dns_deleted": deleted["dns"]})


@router.post("/api/logs/clear-old", response_model=Envelope, summary="Delete rows older than the retention")
async def logs_clear_old(context: Ctx, ip: Peer, days: int | None = Query(None, ge=1, le=3650)) -> dict[str, Any]:
    retention = days or (await context.db(context.store.settings))["log_retention_days"]
    deleted = await call(context.logs, LogStore.clear, time.time() - retention * 86400)
    summary = f"{retention} days: {deleted['http']} http, {deleted['dns']} dns"
    await context.db(context.store.audit, None, ip, "logs.clear_old", summary)
    return ok({"deleted": deleted["http"], "dns_deleted": deleted["dns"], "retention_days": retention})


@router.post(
    "/api/logs/mask-clients", response_model=Envelope, summary="Mask the client addresses of rows already stored"
)
async def logs_mask_clients(context: Ctx, ip: Peer) -> dict[str, Any]:
    masked = await call(context.logs, LogStore.mask_stored)
    await context.db(context.store.audit, None, ip, "logs.mask_clients", f"{masked['http']} http, {masked['dns']} dns")
    return ok({"masked": masked["http"], "dns_masked": masked["dns"]})


@router.get("/api/status", response_model=Envelope, summary="Proxy, DNS and log pipeline status")
async def status(context: Ctx) -> dict[str, Any]:
    proxy, logstore = await asyncio.gather(call(context.proxy, ProxyOwner.status), call(context.logs, LogStore.status))
    return ok({"proxy": proxy, "logs": logstore, "version": context.config.version})


@router.get("/api/traffic/statistics", response_model=Envelope, summary="Traffic per bucket (zero-filled, UTC)")
async def traffic(context: Ctx, period: Literal["hour", "day", "week", "month"] = "day") -> dict[str, Any]:
    return ok(await analytics.traffic(context, period))


@router.get("/api/clients/statistics", response_model=Envelope, summary="Top clients")
async def clients(context: Ctx, hours: int = Hours, limit: int = Query(50, ge=1, le=500)) -> dict[str, Any]:
    return ok(await analytics.clients(context, hours, limit))


@router.get("/api/domains/statistics", response_model=Envelope, summary="Top domains, blocked and allowed")
async def domains(
    context: Ctx, hours: int = Hours, limit: int = Query(50, ge=1, le=500), blocked_only: bool = False
) -> dict[str, Any]:
    return ok(await analytics.domains(context, hours, limit, blocked_only))


@router.get("/api/security/score", response_model=Envelope, summary="Score of the protections in effect")
async def score(context: Ctx) -> dict[str, Any]:
    effective, interception = await asyncio.gather(context.db(context.store.effective_state), context.interception())
    return ok(security_score({**effective, "ssl_bump_in_effect": interception["interception_enabled"]}))


@router.get("/api/security/cve", response_model=Envelope, summary="Squid version and CVEs its package fixes")
async def security_cve(context: Ctx) -> dict[str, Any]:
    version = await asyncio.to_thread(cve.squid_version, context.config.proxy.squid_bin)
    return ok({"version": version, **await asyncio.to_thread(cve.package_cves)})


@router.get("/api/analytics/shadow-it", response_model=Envelope, summary="Known SaaS services in use")
async def shadow_it(context: Ctx, hours: int = Hours) -> dict[str, Any]:
    return ok(await analytics.shadow_it(context, hours))


@router.get("/api/analytics/user-agents", response_model=Envelope, summary="User agents and methods")
async def user_agents(context: Ctx, hours: int = Hours) -> dict[str, Any]:
    return ok(await analytics.user_agents(context, hours))


@router.get("/api/analytics/file-extensions", response_model=Envelope, summary="Extensions of recent URLs")
async def file_extensions(context: Ctx, hours: int = Hours) -> dict[str, Any]:
    return ok(await analytics.file_extensions(context, hours))


@router.get("/api/analytics/top-domains", response_model=Envelope, summary="Top registrable domains")
async def top_domains(context: Ctx, hours: int = Hours, limit: int = Query(30, ge=1, le=500)) -> dict[str, Any]:
    return ok(await analytics.top_domains(context, hours, limit))


@router.get("/api/dashboard/summary", response_model=Envelope, summary="Dashboard totals and top lists")
async def dashboard(context: Ctx) -> dict[str, Any]:
    return ok(await analytics.dashboard(context))


@router.get("/api/audit-log", response_model=Envelope, summary="Administrative actions, newest first")
async def audit_log(
    context: Ctx, limit: int = Query(100, ge=1, le=1000), offset: int = Query(0, ge=0, le=SQLITE_MAX_INT)
) -> dict[str, Any]:
    items, total = await context.db(context.store.audit_log, limit, offset)
    return page(items, total, limit, offset)
