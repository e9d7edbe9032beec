"""The DNS query log: `GET /api/dns/logs` (rows) and `GET /api/dns/stats` (summaries). Client addresses
lose their last octet under `gdpr_mode`, as in `/api/logs`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from actors.webfilter.dnslog import Outcome
from deployments.webfilter import dnsanalytics
from deployments.webfilter.errors import AUTH_ERRORS, ok, page
from deployments.webfilter.routes.common import SIGNED_IN, Ctx, LogPage, gdpr_masked
from deployments.webfilter.schemas import Envelope

router = APIRouter(tags=["logs and analytics"], dependencies=[SIGNED_IN], responses=AUTH_ERRORS)


@router.get("/api/dns/logs", response_model=Envelope, summary="DNS queries, newest first, with the deciding rule")
async def dns_logs(
    context: Ctx, q: LogPage, outcome: Outcome | None = None, search: str | None = Query(None, max_length=253)
) -> dict[str, Any]:
    filters = {"blocked": q.blocked, "client": q.client_ip, "outcome": outcome, "search": search}
    items, total = await dnsanalytics.page(context, q.limit, q.offset, filters)
    return page(await gdpr_masked(context, items), total, q.limit, q.offset)


@router.get("/api/dns/stats", response_model=Envelope, summary="DNS queries per outcome, rule, name and client")
async def dns_stats(
    context: Ctx, hours: int = Query(24, ge=1, le=720), limit: int = Query(10, ge=1, le=100)
) -> dict[str, Any]:
    summary = await dnsanalytics.stats(context, hours, limit)
    await gdpr_masked(context, summary["top_clients"])
    return ok(summary)
