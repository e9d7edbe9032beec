"""A virtual key's own token and spend limits: ``key_limits`` (PRE_FLIGHT) admits, ``key_charge`` (POST_FLIGHT) settles.

- ``tpm``: tokens per minute, cluster-wide (the ``RateLimiter`` actor's bucket ``vkey-tpm:<id>:<tpm>``,
  leased like every other bucket). Admission takes the request's estimate (prompt tokens as
  counted here, plus ``max_tokens`` × ``n`` or ``budget.default_output_tokens``, at most the whole
  bucket); when the upstream's usage is known the bucket is corrected to it: the part of the
  estimate not used goes back, usage above it is taken after the fact (the bucket may go below
  zero, and later requests wait). Parallel requests each take their estimate first, so together
  they cannot be admitted past the bucket. Over it: 429 ``key_tpm_exceeded`` with ``Retry-After``.
- ``budget_daily`` / ``budget_total``: the request's worst-case cost is reserved from the key's
  budget lease (``KeyBudgetLeases``) and the actual cost, priced from the upstream's usage
  (a stream's final usage chunk), is settled when it ends. Short of it: 402 ``key_budget_exceeded``.
"""

from __future__ import annotations

import math

from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.key_budgets import KeyBudgetLeases
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.pricing import PriceTable
from deployments.llm_gateway.shared_state import TokenLeases
from deployments.llm_gateway.stages.preflight import worst_cost

PERIOD = 60.0


def tpm_bucket(key_id: str, tpm: int) -> str:
    """The bucket of a key's tpm; a new limit is a new bucket (a replica's slice of the old one is not spent)."""
    return f"vkey-tpm:{key_id}:{tpm}"


class KeyLimits:
    def __init__(self, prices: PriceTable, leases: TokenLeases, budgets: KeyBudgetLeases) -> None:
        self.prices = prices
        self.leases = leases
        self.budgets = budgets

    async def run(self, ctx: Context) -> None:
        record = ctx.virtual_key
        if record is None:
            return
        tpm = record.get("tpm")
        if tpm:
            estimate = min(ctx.prompt_estimate + ctx.output_estimate, tpm)
            ok, retry = await self.leases.take(tpm_bucket(record["id"], tpm), tpm, PERIOD, float(estimate))
            if not ok:
                raise GatewayError(
                    429,
                    f"This key's limit of {tpm} tokens per minute is exceeded",
                    code="key_tpm_exceeded",
                    headers={"Retry-After": str(max(1, math.ceil(retry)))},
                    error_class="key_tpm_limit",
                )
            ctx.key_tokens_reserved = estimate
        worst = worst_cost(self.prices, ctx)
        generation = await self.budgets.reserve(record, worst)
        if generation is None:
            daily, total = record.get("budget_daily"), record.get("budget_total")
            limits = " / ".join(
                f"{name} budget of ${value:.2f}" for name, value in (("daily", daily), ("total", total)) if value
            )
            raise GatewayError(
                402,
                f"This key's {limits} has not ${worst:.6f} left for this request",
                code="key_budget_exceeded",
                error_class="key_budget",
            )
        if record.get("budget_daily") or record.get("budget_total"):
            ctx.key_reserved, ctx.key_lease = worst, generation


class KeyCharge:
    """Settle the key's tpm bucket and budget to the request's actual usage and cost (also on refusals)."""

    def __init__(self, leases: TokenLeases, budgets: KeyBudgetLeases) -> None:
        self.leases = leases
        self.budgets = budgets

    async def run(self, ctx: Context) -> None:
        record = ctx.virtual_key
        if record is None:
            return
        used = ctx.usage.total if ctx.usage is not None and ctx.result is not None else 0
        tpm, reserved = record.get("tpm"), ctx.key_tokens_reserved
        if tpm and (reserved or used):
            if used > reserved:
                self.leases.debit(tpm_bucket(record["id"], tpm), tpm, PERIOD, float(used - reserved))
            elif reserved > used:
                self.leases.credit(tpm_bucket(record["id"], tpm), float(reserved - used))
        ctx.key_tokens_reserved = 0
        if ctx.key_reserved or ctx.cost:
            self.budgets.settle(record["id"], ctx.key_reserved, ctx.cost, ctx.key_lease)
            ctx.key_reserved = 0.0
