"""POST_FLIGHT: ``charge`` prices the usage, counts tokens and cost, corrects the tpm lease and settles the budget."""

from __future__ import annotations

from deployments.llm_gateway.forwarder import Forwarder
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.pricing import PriceTable
from deployments.llm_gateway.providers.base import Usage
from deployments.llm_gateway.shared_state import BudgetLeases
from deployments.llm_gateway.telemetry import GatewayMetrics


class Charge:
    def __init__(self, prices: PriceTable, metrics: GatewayMetrics, forwarder: Forwarder, budget: BudgetLeases) -> None:
        self.prices = prices
        self.metrics = metrics
        self.forwarder = forwarder
        self.budget = budget

    async def run(self, ctx: Context) -> None:
        usage = ctx.usage
        cost = 0.0
        if usage is None and ctx.result is not None:
            usage = Usage(ctx.prompt_estimate, 0, estimated=True)
        if usage is not None and ctx.result is not None:
            target = ctx.result.attempt.target
            cost = self.prices.cost(target.model, target.config, usage.prompt_tokens, usage.completion_tokens)
            ctx.cost = cost
            self.metrics.tokens.labels(endpoint=ctx.endpoint, role="prompt").inc(usage.prompt_tokens)
            self.metrics.tokens.labels(endpoint=ctx.endpoint, role="completion").inc(usage.completion_tokens)
            self.metrics.cost.labels(endpoint=ctx.endpoint, model=target.model).inc(cost)
            self.forwarder.charge_tokens(target, ctx.prompt_estimate + ctx.output_estimate, usage.total)
        if ctx.reserved or cost:
            self.budget.settle(ctx.reserved, cost)
            ctx.reserved = 0.0
