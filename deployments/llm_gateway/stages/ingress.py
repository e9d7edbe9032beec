"""INGRESS stages besides the security ones: who is asking, how often, and whether there is room."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

from starlette.requests import Request

from deployments.llm_gateway.admission import Admission
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.reload import LiveConfig
from deployments.llm_gateway.shared_state import TokenLeases
from deployments.llm_gateway.telemetry import GatewayMetrics


class Authenticate:
    """``auth``: an inference key (or open access in dev mode); the key's fingerprint is the tenant."""

    def __init__(self, guard: Callable[[Request], Awaitable[str]]) -> None:
        self.guard = guard

    async def run(self, ctx: Context) -> None:
        ctx.tenant = await self.guard(ctx.request)
        ctx.virtual_key = getattr(ctx.request.state, "virtual_key", None)


class ClientRateLimit:
    """``client_rate_limit``: a virtual key's own ``rpm``, then ``rate_limiting.requests_per_minute`` per key,
    cluster-wide (token leases)."""

    def __init__(self, live: LiveConfig, leases: TokenLeases) -> None:
        self.live = live
        self.leases = leases

    async def run(self, ctx: Context) -> None:
        record = ctx.virtual_key
        if record is not None and record.get("rpm"):
            rpm = record["rpm"]
            message = f"This key's limit of {rpm} requests per minute is exceeded"
            bucket = f"vkey:{record['id']}:{rpm}"  # a new limit is a new bucket (held slices of the old one unused)
            await self._take(bucket, rpm, message, "key_rate_limit_exceeded", "key_rate_limit")
        rl = self.live.current.rate_limiting
        if rl.enabled and rl.requests_per_minute > 0:
            rpm = rl.requests_per_minute
            message = f"Rate limit of {rpm} requests per minute exceeded"
            await self._take(f"client:{ctx.tenant}", rpm, message, "rate_limit_exceeded", "client_rate_limit")

    async def _take(self, bucket: str, rpm: int, message: str, code: str, error_class: str) -> None:
        ok, retry = await self.leases.take(bucket, rpm, 60.0, 1.0)
        if not ok:
            headers = {"Retry-After": str(max(1, math.ceil(retry)))}
            raise GatewayError(429, message, code=code, headers=headers, error_class=error_class)


class AdmissionControl:
    """``admission``: this replica's share of the in-flight and queue limits; over them, 503 at once."""

    def __init__(self, live: LiveConfig, admission: Admission, metrics: GatewayMetrics) -> None:
        self.live = live
        self.admission = admission
        self.metrics = metrics

    async def run(self, ctx: Context) -> None:
        if not await self.admission.acquire():
            self.metrics.load_shed.inc()
            raise GatewayError(
                503,
                "Server is at capacity, retry later",
                code="overloaded",
                headers={"Retry-After": str(self.live.current.admission.retry_after_s)},
                error_class="load_shed",
            )
        ctx.cleanups.append(self.admission.release)
