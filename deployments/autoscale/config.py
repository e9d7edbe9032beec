"""Configuration of the autoscaler: hosts, API protection, monitor and scaling model.

Loaded from YAML (`config/autoscale.yaml`) with `AUTOSCALE__SECTION__KEY=value`
overrides. The API keys never live in the file: `auth.api_keys_env` names the
environment variable holding them (comma-separated).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from actors.autoscale.policy import Limits, ModelSettings
from rayfleet.config import load_yaml
from rayfleet.ssh import SSHHost
from rayfleet.ssh_config import SSHHostConfig, expand_path

from .schemas import normalise_id


class ConfigError(RuntimeError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HostConfig(SSHHostConfig, _Strict):
    """A Proxmox VE node reached over SSH (by key). Its capacity is read live
    (`pvesh get /nodes/<node>/status`, kept `monitor.capacity_refresh_seconds`); `cores` and
    `memory_mb` are the fallback when that fails."""

    connect_timeout: float = Field(default=10.0, gt=0)
    node: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$",
        description="the node's name in the Proxmox API (/nodes/<node>); default: this host's key in `hosts`",
    )
    cores: int = Field(default=24, ge=1, description="fallback host CPU cores when pvesh cannot tell")
    memory_mb: int = Field(default=24576, ge=256, description="fallback host memory (MB) when pvesh cannot tell")

    def node_name(self, key: str) -> str:
        return self.node or key

    @model_validator(mode="after")
    def _key(self) -> HostConfig:
        if not self.key_file:
            raise ValueError("each host needs key_file")
        return self

    def ssh(self) -> SSHHost:
        return SSHHost(
            host=self.host,
            port=self.effective_port(),
            user=self.user,
            key_file=self.key_file,
            known_hosts=self.known_hosts,
            host_key_checking=self.host_key_checking,
            max_sessions=self.max_sessions,
            connect_timeout=self.connect_timeout,
        )


class AuthConfig(_Strict):
    enabled: bool = True
    api_keys_env: str = "AUTOSCALE_API_KEY"

    def keys(self, environ: Mapping[str, str] | None = None) -> list[str]:
        env = os.environ if environ is None else environ
        return [k.strip() for k in env.get(self.api_keys_env, "").split(",") if k.strip()]


class RateLimitConfig(_Strict):
    enabled: bool = True
    max_requests_per_minute: int = Field(default=120, ge=1)
    time_window_seconds: float = Field(default=60, gt=0)
    exempt_loopback: bool = Field(default=True, description="the fleet's own monitor and model call from loopback")
    actor_name: str = "autoscale-rate-limit"


class MonitorConfig(_Strict):
    enabled: bool = True
    interval_seconds: float = Field(default=5.0, gt=0)
    history_samples: int = Field(default=720, ge=10, le=100_000)
    duckdb_path: str | None = "${RAYFLEET_STATE_DIR:-var}/autoscale/history.duckdb"
    retention_samples: int = Field(default=20_000, ge=100, description="rows kept per container in DuckDB")
    capacity_refresh_seconds: float = Field(
        default=60.0, gt=0, description="how long a node's `pvesh get /nodes/<node>/status` reading is kept"
    )
    disk_interval_seconds: float = Field(
        default=60.0,
        ge=0,
        description="how often each container's `df -P /` is read (0: every sample); samples in between carry the last",
    )

    @field_validator("duckdb_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return expand_path(value) if value else value


class TierConfig(Limits):
    """A tier: bounds and priority (see `Limits`) for the containers listed in it."""

    model_config = ConfigDict(extra="forbid")
    containers: list[str] = Field(default_factory=list, description="container ids in this tier")

    @field_validator("containers", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> list[str]:
        if not isinstance(value, list):
            raise ValueError("a list of container ids")
        return [normalise_id(v) for v in value]


class ScalerConfig(_Strict):
    enabled: bool = True
    interval_seconds: float = Field(default=10.0, gt=0)
    dry_run: bool = False
    api_url: str | None = Field(
        default=None, description="where the model reaches this API; default http://127.0.0.1:$RAYFLEET_PORT/autoscale"
    )
    request_timeout: float = Field(default=5.0, gt=0)
    ignore: list[str] = Field(default_factory=list)
    limits: Limits = Field(default_factory=Limits, description="the default tier: containers in no `tiers` entry")
    tiers: dict[str, TierConfig] = Field(default_factory=dict)
    model: ModelSettings = Field(default_factory=ModelSettings)
    decisions_kept: int = Field(default=2000, ge=10)

    def effective_api_url(self) -> str:
        return self.api_url or f"http://127.0.0.1:{os.environ.get('RAYFLEET_PORT', '8000')}/autoscale"

    @field_validator("ignore", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> list[str]:
        if not isinstance(value, list):
            raise ValueError("a list of container ids")
        return [normalise_id(v) for v in value]

    @field_validator("tiers")
    @classmethod
    def _one_tier_each(cls, value: dict[str, TierConfig]) -> dict[str, TierConfig]:
        seen: dict[str, str] = {}
        for name, tier in value.items():
            for vmid in tier.containers:
                if vmid in seen:
                    raise ValueError(f"container {vmid} is in two tiers ({seen[vmid]}, {name})")
                seen[vmid] = name
        return value

    def tier_of_containers(self) -> dict[str, dict[str, Any]]:
        """{vmid: {"name": tier, **bounds and priority}} for every container named in a tier."""
        return {
            vmid: {"name": name, **tier.model_dump(exclude={"containers"})}
            for name, tier in self.tiers.items()
            for vmid in tier.containers
        }


class AutoscaleConfig(_Strict):
    hosts: dict[str, HostConfig]
    command_timeout: float = Field(default=30.0, gt=0)
    health_cache_seconds: float = Field(default=5.0, ge=0)
    auth: AuthConfig = Field(default_factory=AuthConfig)
    rate_limit: RateLimitConfig = Field(default_factory=RateLimitConfig)
    monitor: MonitorConfig = Field(default_factory=MonitorConfig)
    scaler: ScalerConfig = Field(default_factory=ScalerConfig)
    supervised_children: list[str] = Field(
        default_factory=list,
        description="status files a supervisor of the hosts publishes (the demo pve-sims' children.json); "
        "listed in /health/check under children and in /metrics",
    )

    @field_validator("supervised_children")
    @classmethod
    def _status_files(cls, value: list[str]) -> list[str]:
        return [expand_path(path) for path in value]

    @field_validator("hosts")
    @classmethod
    def _non_empty(cls, value: dict[str, HostConfig]) -> dict[str, HostConfig]:
        if not value:
            raise ValueError("configure at least one host")
        return value


def load(path: str | Path | None, environ: Mapping[str, str] | None = None) -> AutoscaleConfig:
    config = load_yaml(path, AutoscaleConfig, env_prefix="AUTOSCALE", environ=environ)
    if config.auth.enabled and not config.auth.keys(environ):
        raise ConfigError(f"authentication is on but {config.auth.api_keys_env} is empty: set the API key")
    return config
