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


async def ensure_background(config: AutoscaleConfig) -> None:
    monitors: dict[str, ActorHandle[MonitorActor]] = {}
    if config.monitor.enabled:
        for name, host in config.hosts.items():
            handle = rf_state.actor(
                MonitorActor,
                f"autoscale-monitor-{name}",
                name,
                host.ssh(),
                config.monitor.interval_seconds,
                config.monitor.history_samples,
                _db_path(config.monitor.duckdb_path, name),
                config.monitor.retention_samples,
                config.command_timeout,
            )
            await call(handle, MonitorActor.start)
            monitors[name] = handle
    if config.scaler.enabled and monitors:
        s = config.scaler
        scaler = rf_state.actor(
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
        )
        await call(scaler, ScalerActor.start)
