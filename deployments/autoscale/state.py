"""What the autoscale API's routes share: configuration, the fleet, metrics, the health probe, the rate limit."""

from __future__ import annotations

from dataclasses import dataclass

from actors.autoscale.scaler import ScalerActor
from actors.rate_limit import RateLimitWindow
from rayfleet.state import ActorHandle, actor

from .config import AutoscaleConfig
from .fleet import Fleet
from .probe import HealthProbe
from .telemetry import ApiMetrics


@dataclass
class AutoscaleState:
    config: AutoscaleConfig
    fleet: Fleet
    metrics: ApiMetrics
    probe: HealthProbe
    rate_limit: ActorHandle[RateLimitWindow]
    background: bool = True
    """Start (once, cluster-wide) the monitors and the scaling model when the app starts."""
    scaler: ActorHandle[ScalerActor] | None = None
    """The scaling model whose decisions `/api/v1/decisions` serves (None: this deployment runs none)."""

    @classmethod
    def from_ray(cls, config: AutoscaleConfig, *, background: bool = True) -> AutoscaleState:
        """The default: a fleet over the shared SSH pool, this replica's metrics, the named rate-limit actor
        (an in-process stand-in without Ray). Tests pass ``background=False``."""
        from .background import scaler_handle

        fleet = Fleet(config)
        return cls(
            config=config,
            fleet=fleet,
            metrics=ApiMetrics(),
            probe=HealthProbe(fleet, config.health_cache_seconds),
            rate_limit=actor(RateLimitWindow, config.rate_limit.actor_name),
            background=background,
            scaler=scaler_handle(config) if background else None,
        )
