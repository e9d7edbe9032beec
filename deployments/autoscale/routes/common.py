"""What the autoscale routers share: the state dependency, the rate limit, the container id in the query."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request
from pydantic import ValidationError

from actors.rate_limit import RateLimitWindow
from rayfleet.appstate import state_of
from rayfleet.state import call

from ..errors import ApiError, validation_failed
from ..schemas import Target
from ..state import AutoscaleState

Ctx = Annotated[AutoscaleState, Depends(state_of(AutoscaleState))]
LOOPBACK = ("127.", "::1")

IdParam = Annotated[
    str | None,
    Query(
        description="container id, digits in 100-999999 (or give vm_id / container_id)",
        openapi_examples={"existing": {"value": "101"}},
    ),
]


async def rate_limited(request: Request, state: Ctx) -> None:
    """Per client address (loopback exempt when configured): 429 with Retry-After once over the limit."""
    rate = state.config.rate_limit
    if not rate.enabled:
        return
    ip = request.client.host if request.client else "unknown"
    if rate.exempt_loopback and ip.startswith(LOOPBACK):
        return
    decision = await call(
        state.rate_limit,
        RateLimitWindow.hit,
        f"autoscale:{ip}",
        rate.max_requests_per_minute,
        rate.time_window_seconds,
    )
    headers = {
        "X-RateLimit-Limit": str(decision.limit),
        "X-RateLimit-Remaining": str(decision.remaining),
        "X-RateLimit-Reset": str(decision.reset_epoch),
    }
    if not decision.allowed:
        raise ApiError(429, "Rate limit exceeded", headers={**headers, "Retry-After": str(decision.retry_after)})


def query_target(lxc_id: str | None, vm_id: str | None, container_id: str | None) -> str:
    """The container the query string names (400 "Validation failed" when the ids are bad or disagree)."""
    try:
        return Target(lxc_id=lxc_id, vm_id=vm_id, container_id=container_id).vmid
    except ValidationError as exc:
        raise validation_failed(
            [str(e.get("msg", "invalid")).removeprefix("Value error, ") for e in exc.errors()]
        ) from exc
