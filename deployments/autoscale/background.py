"""Start (once, cluster-wide) the monitors and the scaling model as named actors."""

from __future__ import annotations

from pathlib import Path

from actors.autoscale.monitor import MonitorActor
from actors.autoscale.scaler import ScalerActor
from rayfleet import state as rf_state
from rayfleet.state import ActorHandle, call

from .config import AutoscaleConfig


def _db_path(base: str | None, host: str) -> str | None:
    if not base:
        return None
    p = Path(base)
    return str(p.with_name(f"{p.stem}-{host}{p.suffix or '.duckdb'}"))


def monitor_handles(config: AutoscaleConfig) -> dict[str, ActorHandle[MonitorActor]]:
    """One monitor per host (named actors; created here if no replica created them yet, not started)."""
    if not config.monitor.enabled:
        return {}
    return {
        name: rf_state.actor(
            MonitorActor,
            f"autoscale-monitor-{name}",
            name,
            host.ssh(),
            config.monitor.interval_seconds,
            config.monitor.history_samples,
            _db_path(config.monitor.duckdb_path, name),
            config.monitor.retention_samples,
            config.command_timeout,
            config.monitor.capacity_refresh_seconds,
            config.monitor.disk_interval_seconds,
        )
        for name, host in config.hosts.items()
    }


def scaler_handle(config: AutoscaleConfig) -> ActorHandle[ScalerActor] | None:
    """The scaling model (named actor, created here if needed, not started); None when it is off."""
    monitors = monitor_handles(config)
    if not (config.scaler.enabled and monitors):
        return None
    s = config.scaler
    return rf_state.actor(
        ScalerActor,
        "autoscale-scaler",
        monitors,
        {name: (h.cores, h.memory_mb) for name, h in config.hosts.items()},
        s.effective_api_url(),
        config.auth.api_keys_env,
        s.interval_seconds,
        s.dry_run,
        s.limits.model_dump(),
        s.model.model_dump(),
        s.ignore,
        s.request_timeout,
        s.decisions_kept,
        tiers=s.tier_of_containers(),
        nodes={name: h.node_name(name) for name, h in config.hosts.items()},
    )


async def ensure_background(config: AutoscaleConfig) -> None:
    for handle in monitor_handles(config).values():
        await call(handle, MonitorActor.start)
    scaler = scaler_handle(config)
    if scaler is not None:
        await call(scaler, ScalerActor.start)
