"""The request path as ordered rings of stages.

Rings run in order INGRESS → PRE_FLIGHT → ROUTING → POST_FLIGHT → BACKGROUND. The
first three fail closed (an exception ends the request with an error response); the
last two fail open (an exception is logged and the request carries on). A stage may
answer the request by setting ``ctx.response`` (cache hit, refusal); later stages of
the first three rings are then skipped, while POST_FLIGHT and BACKGROUND still run.
For a streamed answer, POST_FLIGHT and BACKGROUND run when the stream ends, however it
ends (client disconnect included), so usage is always charged. Each stage is a named
plugin: its latency is measured per request, and any plugin not marked ``required``
can be switched off cluster-wide (``/admin/plugins``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.forwarder import UpstreamResult
from deployments.llm_gateway.providers.base import Usage
from deployments.llm_gateway.routing import Target
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

RINGS = ("INGRESS", "PRE_FLIGHT", "ROUTING", "POST_FLIGHT", "BACKGROUND")
FAIL_CLOSED = frozenset({"INGRESS", "PRE_FLIGHT", "ROUTING"})


@dataclass
class Context:
    request: Request
    route: str
    kind: str
    request_id: str
    started: float = field(default_factory=time.perf_counter)
    wall: float = field(default_factory=time.time)
    raw_body: bytes = b""
    body: dict[str, Any] = field(default_factory=dict)
    client_key: str | None = None
    tenant: str = "anonymous"
    virtual_key: dict[str, Any] | None = None  # the record of a virtual key (``virtual_keys``)
    stream: bool = False
    client_wants_usage: bool = False
    requested_model: str = ""
    model: str = ""
    targets: list[Target] = field(default_factory=list)
    prompt_estimate: int = 0
    output_estimate: int = 0
    cache_key: str | None = None
    cache_status: str = "OFF"
    reserved: float = 0.0
    key_reserved: float = 0.0  # USD reserved from the virtual key's budget (``key_limits``)
    key_lease: int = 0  # the generation of the key's budget lease the reservation came from
    key_tokens_reserved: int = 0  # tokens taken from the virtual key's tpm bucket
    fallback: str = ""
    result: UpstreamResult | None = None
    response: Response | None = None
    status: int = 0
    usage: Usage | None = None
    cost: float = 0.0
    endpoint: str = ""
    ttft: float | None = None
    upstream_ms: float = 0.0
    error_class: str | None = None
    stream_failed: bool = False
    stream_started: bool = False  # the SSE body began (SettledStream settles one that never did)
    cacheable_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    rings: dict[str, dict[str, Any]] = field(default_factory=dict)
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    injection_score: float = 0.0
    links_replaced: int = 0


Handler = Callable[[Context], Awaitable[None]]


@dataclass
class Stage:
    name: str
    ring: str
    run: Handler
    required: bool = False


def _nothing_disabled() -> frozenset[str]:
    return frozenset()


class Pipeline:
    def __init__(
        self,
        stages: list[Stage],
        on_trace: Callable[[Context], None] | None = None,
        disabled: Callable[[], frozenset[str]] = _nothing_disabled,
    ) -> None:
        order = {ring: i for i, ring in enumerate(RINGS)}
        for stage in stages:
            if stage.ring not in order:
                raise ValueError(f"unknown ring {stage.ring!r} for stage {stage.name}")
        self.stages = sorted(stages, key=lambda s: order[s.ring])
        self.on_trace = on_trace
        self.disabled = disabled

    def stage(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)

    async def _ring(self, ctx: Context, ring: str) -> None:
        t0 = time.perf_counter()
        plugins: list[dict[str, Any]] = []
        off = self.disabled()
        try:
            for stage in self.stages:
                if stage.ring != ring or (stage.name in off and not stage.required):
                    continue
                if ring in FAIL_CLOSED and ctx.response is not None:
                    break
                s0 = time.perf_counter()
                try:
                    await stage.run(ctx)
                except GatewayError:
                    raise
                except Exception:
                    if ring in FAIL_CLOSED:
                        raise
                    log.warning(
                        "stage failed (fail-open)",
                        exc_info=True,
                        extra={"stage": stage.name, "request_id": ctx.request_id},
                    )
                finally:
                    plugins.append({"name": stage.name, "ms": round((time.perf_counter() - s0) * 1000, 3)})
        finally:
            ctx.rings[ring] = {"duration_ms": round((time.perf_counter() - t0) * 1000, 3), "plugins": plugins}

    async def run(self, ctx: Context) -> None:
        """INGRESS, PRE_FLIGHT and ROUTING; raises GatewayError to refuse."""
        for ring in RINGS[:3]:
            await self._ring(ctx, ring)

    async def finish(self, ctx: Context) -> None:
        """POST_FLIGHT and BACKGROUND (fail open), then cleanups and the trace."""
        try:
            for ring in RINGS[3:]:
                await self._ring(ctx, ring)
        finally:
            for cleanup in ctx.cleanups:
                try:
                    cleanup()
                except Exception:
                    log.warning("cleanup failed", exc_info=True)
            ctx.cleanups.clear()
            if self.on_trace is not None:
                self.on_trace(ctx)
