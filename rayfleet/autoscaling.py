"""Serve autoscaling that sees the direct-ingress load too.

Serve's default policy counts the requests that went through its proxy and handles.
Requests on a replica's direct listener never do, so each replica with a direct
listener reports them as the custom metric ``direct_ongoing``
(``record_autoscaling_stats``, see `rayfleet.serving`) and this policy adds them to
Serve's own count before applying the same target-per-replica rule. Serve still
applies min/max replicas, the up/down-scaling delays and factors around it.
"""

from __future__ import annotations

from typing import Any

DIRECT_METRIC = "direct_ongoing"


def direct_load(ctx: Any) -> float:
    """Direct requests in progress over the running replicas (averaged over Serve's look-back window)."""
    metrics = ctx.aggregated_metrics or {}
    return float(sum(metrics.get(DIRECT_METRIC, {}).values()))


def direct_aware_policy(ctx: Any) -> tuple[float, dict[str, Any]]:
    """Replicas wanted so that (proxy + direct) ongoing requests per replica meet the target."""
    running = ctx.current_num_replicas
    if running == 0:
        return ctx.target_num_replicas, {}
    total = float(ctx.total_num_requests) + direct_load(ctx)
    target = ctx.config.get_target_ongoing_requests() * running
    return running * total / target, {}
