"""What several rings' stages share."""

from __future__ import annotations

import time

from deployments.llm_gateway.pipeline import Context


def overhead(ctx: Context, upstream_ms: float, at: float | None = None) -> dict[str, str]:
    """``x-rayfleet-overhead-ms``: the gateway's own time so far, upstream time excluded."""
    total = ((at or time.perf_counter()) - ctx.started) * 1000
    return {"x-rayfleet-overhead-ms": f"{max(0.0, total - upstream_ms):.2f}"}
