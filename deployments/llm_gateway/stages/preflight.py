"""PRE_FLIGHT stages besides the security ones: body limits, model resolution, cache check, budget guard."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.responses import JSONResponse, StreamingResponse

from deployments.llm_gateway.body import read_capped
from deployments.llm_gateway.cache import (
    OPT_IN_HEADER,
    RedisCache,
    SQLiteCache,
    cache_key,
    deterministic,
    replay_chunks,
)
from deployments.llm_gateway.discovery import LocalServers
from deployments.llm_gateway.errors import GatewayError, json_object
from deployments.llm_gateway.masking import bounded
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.pricing import PriceTable
from deployments.llm_gateway.providers.base import estimate_tokens, prompt_text
from deployments.llm_gateway.reload import LiveConfig
from deployments.llm_gateway.routing import Router, Target
from deployments.llm_gateway.shared_state import BudgetLeases
from deployments.llm_gateway.stages.common import overhead
from deployments.llm_gateway.validation import check_inference
from deployments.llm_gateway.virtual_keys import allowed, key_model


class RequestLimits:
    """``request_limits``: the raw-byte cap, the nesting depth, then the inference body's fields."""

    def __init__(self, live: LiveConfig) -> None:
        self.live = live

    async def run(self, ctx: Context) -> None:
        sec = self.live.current.security
        raw = await read_capped(ctx.request, sec.max_payload_size_kb * 1024 if sec.enabled else 0)
        body = json_object(raw, sec.max_nesting_depth if sec.enabled else 0)
        model, stream = check_inference(ctx.kind, body, sec.max_messages if sec.enabled else None)
        options = body.get("stream_options")
        ctx.raw_body, ctx.body, ctx.stream = raw, body, stream
        ctx.client_wants_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
        ctx.requested_model = model


class ModelResolution:
    """``model_resolution``: the model's targets in plan order and the request's token estimates."""

    def __init__(self, live: LiveConfig, router: Router) -> None:
        self.live = live
        self.router = router

    async def run(self, ctx: Context) -> None:
        named = key_model(ctx.virtual_key, ctx.requested_model)
        ctx.model, ctx.targets = self.router.plan(named)
        if ctx.virtual_key is not None and not allowed(ctx.virtual_key, named, ctx.model):
            raise GatewayError(
                403,
                f"This key may not use the model '{bounded(ctx.requested_model, 256)}'",
                code="model_not_allowed",
                error_class="model_not_allowed",
            )
        ctx.prompt_estimate = estimate_tokens(prompt_text(ctx.body))
        if ctx.kind != "embeddings":
            max_tokens = ctx.body.get("max_tokens") or ctx.body.get("max_completion_tokens")
            per_choice = (
                int(max_tokens)
                if isinstance(max_tokens, int) and max_tokens > 0
                else self.live.current.budget.default_output_tokens
            )
            ctx.output_estimate = per_choice * max(1, int(ctx.body.get("n") or 1))


class CacheCheck:
    """``cache_check``: a stored answer for the same tenant, kind, model and body answers at once.

    Only deterministic requests (``cache.deterministic``) are looked up and stored, unless the
    client sends ``X-LLM-Cache: allow``; the others are ``SKIP``. ``Cache-Control: no-cache`` is ``BYPASS``.
    """

    def __init__(self, cache: SQLiteCache | RedisCache | None) -> None:
        self.cache = cache

    async def run(self, ctx: Context) -> None:
        if self.cache is None:
            return
        if "no-cache" in ctx.request.headers.get("cache-control", "").lower():
            ctx.cache_status = "BYPASS"
            return
        opted_in = ctx.request.headers.get(OPT_IN_HEADER, "").strip().lower() == "allow"
        if not opted_in and not deterministic(ctx.kind, ctx.body):
            ctx.cache_status = "SKIP"
            return
        ctx.cache_key = cache_key(ctx.tenant, ctx.kind, ctx.model, ctx.body)
        hit = await self.cache.get(ctx.cache_key)
        if hit is None:
            ctx.cache_status = "MISS"
            return
        ctx.cache_status = "HIT"
        ctx.status = 200
        headers = {"X-Cache": "HIT", **overhead(ctx, 0.0)}
        if ctx.stream:
            chunks = replay_chunks(ctx.kind, hit, ctx.client_wants_usage)
            ctx.response = StreamingResponse(_iterate(chunks), media_type="text/event-stream", headers=headers)
        else:
            ctx.response = JSONResponse(hit, headers=headers)


def worst_cost(prices: PriceTable, ctx: Context) -> float:
    """The most the request can cost in USD: its token estimates at the priciest of its targets."""
    worst = 0.0
    for target in ctx.targets:
        pin, pout = prices.price(target.model, target.config)
        worst = max(worst, (ctx.prompt_estimate * pin + ctx.output_estimate * pout) / 1_000_000)
    return worst


class BudgetGuard:
    """``budget_guard``: reserve the worst-case cost, or fall back to the local model, or refuse with 402."""

    def __init__(self, live: LiveConfig, prices: PriceTable, budget: BudgetLeases, local: LocalServers) -> None:
        self.live = live
        self.prices = prices
        self.budget = budget
        self.local = local

    async def run(self, ctx: Context) -> None:
        config = self.live.current
        budget = config.budget
        worst = worst_cost(self.prices, ctx)
        if worst <= 0:
            return
        local = self.local.local_target if budget.fallback_to_local_on_limit else None
        threshold = config.server.local_model.fallback_threshold
        if local is not None and self.budget.spent_fraction() >= 1.0 - threshold:
            _use_local(ctx, local)
            return
        if await self.budget.reserve(worst):
            ctx.reserved = worst
            return
        if local is not None:
            _use_local(ctx, local)
            return
        raise GatewayError(
            402, f"Daily budget of ${budget.daily_limit:.2f} is exhausted", code="budget_exceeded", error_class="budget"
        )


def _use_local(ctx: Context, local: Target) -> None:
    ctx.targets = [local]
    ctx.model = local.model
    ctx.fallback = "local-model"
    ctx.headers["X-Rayfleet-Budget-Fallback"] = f"local-model; endpoint={local.endpoint}; model={local.model}"
    if ctx.cache_key is not None:
        ctx.cache_key = cache_key(ctx.tenant, ctx.kind, ctx.model, ctx.body)


async def _iterate(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
