"""Spend (``spend.py``): every key's for admins, a virtual key's own for its holder.

| Method | Path | Auth | Answer |
|---|---|---|---|
| GET | /api/v1/spend | admin key or session | ``{group_by, from, to, filters, data: [{<group>, requests, prompt_tokens, completion_tokens, total_tokens, cost_usd}], total_cost_usd, total_requests}`` |
| GET | /v1/spend | a virtual key | the same, of the presenting key only, plus ``key``: its id, team, budgets and spend today and in total |

This replica's unwritten records are written first; other replicas' within their
``storage.flush_interval``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.routes.common import Gateway
from deployments.llm_gateway.spend import SpendQuery
from deployments.llm_gateway.state import GatewayState
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

router = APIRouter(tags=["control plane"])
holder_router = APIRouter(tags=["inference"])


async def _sum(gateway: GatewayState, query: SpendQuery) -> dict[str, Any]:
    records = gateway.stores.records
    try:
        await records.flush()
        rows = await records.backend.spend(query)
    except Exception as exc:
        log.warning("spend query failed", extra={"error": type(exc).__name__})
        raise GatewayError(503, "the spend records are unavailable", code="spend_unavailable") from None
    return query.answer(rows)


@router.get("/api/v1/spend")
async def spend(request: Request, gateway: Gateway) -> dict[str, Any]:
    """Spend summed per ``group_by`` (key, team, model, endpoint) between ``from`` and ``to``, optionally
    filtered by ``key_id`` or ``team``."""
    return await _sum(gateway, SpendQuery.parse(request.query_params))


@holder_router.get("/v1/spend")
async def own_spend(request: Request, gateway: Gateway) -> dict[str, Any]:
    """The presenting virtual key's own spend (same parameters); asking for another key or team is 403."""
    record = getattr(request.state, "virtual_key", None)
    if record is None:
        raise GatewayError(403, "only a virtual key has its own spend: use /api/v1/spend", code="virtual_key_required")
    query = SpendQuery.parse(request.query_params)
    if query.key_id not in (None, record["id"]) or query.team not in (None, record.get("team")):
        raise GatewayError(403, "a key may read its own spend only", code="spend_not_allowed")
    answer = await _sum(gateway, SpendQuery(query.group_by, query.since, query.until, key_id=record["id"]))
    try:
        usage = await gateway.views.key_budgets.usage(record["id"])
    except Exception as exc:
        log.warning("key budget usage failed", extra={"error": type(exc).__name__})
        raise GatewayError(503, "the key budgets are unavailable", code="spend_unavailable") from None
    answer["key"] = {
        "id": record["id"],
        "team": record.get("team"),
        "budget_daily": record.get("budget_daily"),
        "budget_total": record.get("budget_total"),
        "spent_today": usage["spent_today"],
        "spent_total": usage["spent_total"],
    }
    return answer
