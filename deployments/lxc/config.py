"""Configuration of the container management API (validated on start)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from rayfleet.config import load_yaml
from rayfleet.ssh_config import SSHHostConfig, expand_path, host_address

from . import validate

EXAMPLE_KEYS = {
    "",
    "your-api-key",
    "your_api_key",
    "changeme",
    "change-me",
    "example",
    "example-key",
    "your-secure-api-key",
    "your-secure-api-key-here",
    "secret",
    "apikey",
    "api_key",
    "CHANGE_ME",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClusterNode(_Strict):
    """A node of the zone's cluster: where its SSH server answers (user, keys, known_hosts and
    limits are the zone's)."""

    host: str | None = Field(default=None, description="default: the zone's host")
    port: int = 22
    port_env: str | None = None

    @field_validator("host")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        return value if value is None else host_address(value)


class ZoneConfig(SSHHostConfig, _Strict):
    """One availability zone: the hypervisor host reached over SSH (key or password).

    With `nodes` the zone is a Proxmox cluster: the zone's host is where cluster-wide commands
    run (any node can), and a command on a container runs on the node holding it.
    """

    password: SecretStr | None = None
    password_env: str | None = None
    nodes: dict[str, ClusterNode] = Field(
        default_factory=dict, description="the cluster's nodes by name (empty: one host, the zone's)"
    )

    @field_validator("nodes")
    @classmethod
    def _node_names(cls, value: dict[str, ClusterNode]) -> dict[str, ClusterNode]:
        for name in value:
            validate.node(name, "nodes")
        return value

    def node_host(self, name: str) -> ZoneConfig:
        """The SSH coordinates of node `name` (the zone's settings with the node's address)."""
        node = self.nodes[name]
        return self.model_copy(
            update={"host": node.host or self.host, "port": node.port, "port_env": node.port_env, "nodes": {}}
        )

    @model_validator(mode="after")
    def _auth(self) -> ZoneConfig:
        if not self.key_file and self.password is None and not self.password_env:
            raise ValueError("each availability zone needs key_file, password or password_env")
        return self

    def effective_password(self) -> str | None:
        if self.password is not None:
            return self.password.get_secret_value()
        if self.password_env:
            return os.environ.get(self.password_env) or None
        return None


class RegionConfig(_Strict):
    availability_zones: dict[str, ZoneConfig]

    @field_validator("availability_zones")
    @classmethod
    def _non_empty(cls, value: dict[str, ZoneConfig]) -> dict[str, ZoneConfig]:
        if not value:
            raise ValueError("a region needs at least one availability zone")
        return value


class InstanceSize(_Strict):
    memory: int = Field(ge=16)
    cpulimit: float = Field(gt=0, le=8192)
    storage: str = Field(description="root disk as <storage>:<GiB>, e.g. local-lvm:8")

    @field_validator("storage")
    @classmethod
    def _storage(cls, value: str) -> str:
        store, _, size = value.partition(":")
        validate.storage(store, "storage")
        if not size.isdigit() or int(size) < 1:
            raise ValueError("storage must look like local-lvm:8")
        return value


class ApiConfig(_Strict):
    host: str = "127.0.0.1"
    port: int = 8080
    debug: bool = False
    log_level: str = "info"
    command_timeout: float = Field(default=3600, gt=0)
    allowed_origins: list[str] = Field(default_factory=list)
    host_exec_enabled: bool = Field(default=True, description="false answers /px/exec with 403")
    max_body_bytes: int = Field(
        default=65_536, ge=1_024, le=16_777_216, description="request bodies over this many bytes get 413"
    )


class ScalingConfig(_Strict):
    cpu_high: float = 80.0
    cpu_low: float = 20.0
    memory_high: float = 80.0
    memory_low: float = 20.0
    storage_high: float = 85.0
    max_cores: int = 16
    max_memory_mb: int = 65536


class LxcConfig(_Strict):
    api_key: SecretStr | None = None
    api_key_env: str | None = "LXC_API_KEY"
    regions: dict[str, RegionConfig]
    instance_sizes: dict[str, InstanceSize]
    default_region: str | None = None
    default_az: str | None = None
    default_storage: str = "local-lvm"
    default_network: str = "vmbr0"
    template_storage: str = "local"
    api: ApiConfig = Field(default_factory=ApiConfig)
    scaling: ScalingConfig = Field(default_factory=ScalingConfig)
    compose_dir: str = "var/lxc/compose"
    compose_allow_urls: bool = False
    compose_max_bytes: int = 262_144
    upload_dir: str = "var/lxc/uploads"
    conf_backup_dir: str = "var/lxc/conf-backups"
    download_dir: str = "var/lxc/downloads"
    audit_log: str = "var/lxc/audit.log"
    lock_ttl: float = Field(default=7300, gt=0, description="seconds a container lock may be held before it lapses")
    jobs_store: str | None = Field(
        default=None,
        description="DSN of the jobs' durable store (sqlite:///path or postgresql://...); "
        "default RAYFLEET_DURABLE_DSN, else var/durable/state.sqlite3",
    )
    supervised_children: list[str] = Field(
        default_factory=list,
        description="status files a supervisor of the hosts publishes (the demo pve-sim's children.json); "
        "listed in /api/v1/health under children and in /api/v1/metrics",
    )

    @field_validator("regions", "instance_sizes")
    @classmethod
    def _non_empty(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("compose_dir", "upload_dir", "conf_backup_dir", "download_dir", "audit_log")
    @classmethod
    def _dirs(cls, value: str) -> str:
        return expand_path(value)

    @field_validator("supervised_children")
    @classmethod
    def _status_files(cls, value: list[str]) -> list[str]:
        return [expand_path(path) for path in value]

    @field_validator("default_storage", "template_storage")
    @classmethod
    def _storage_id(cls, value: str) -> str:
        return validate.storage(value, "default_storage")

    @field_validator("default_network")
    @classmethod
    def _bridge(cls, value: str) -> str:
        return validate.node(value, "default_network")

    @model_validator(mode="after")
    def _defaults_exist(self) -> LxcConfig:
        if self.default_region and self.default_region not in self.regions:
            raise ValueError(f"default_region '{self.default_region}' is not a configured region")
        if "small" not in self.instance_sizes:
            raise ValueError("instance_sizes must define 'small' (the creation default)")
        return self

    def resolved_api_key(self) -> str:
        """The API key in force: `api_key`, else the variable `api_key_env` names."""
        if self.api_key is not None and self.api_key.get_secret_value():
            return self.api_key.get_secret_value()
        if self.api_key_env:
            return os.environ.get(self.api_key_env, "")
        return ""

    def check_startable(self) -> list[str]:
        """Refuse an empty or example key; return warnings for a weak one."""
        key = self.resolved_api_key()
        if key.strip() in EXAMPLE_KEYS or key.strip().lower() in {k.lower() for k in EXAMPLE_KEYS}:
            raise ValueError(
                "api_key is empty or an example value; set a real key "
                f"(api_key, or the environment variable {self.api_key_env or 'named by api_key_env'})"
            )
        return ["api_key is shorter than 32 characters"] if len(key) < 32 else []

    def zone(self, region: str | None, az: str | None) -> tuple[str, str, ZoneConfig]:
        region = region or self.default_region or next(iter(self.regions))
        if region not in self.regions:
            raise validate.Invalid(f"unknown region '{region[:64]}'")
        zones = self.regions[region].availability_zones
        if az is None:
            az = self.default_az if self.default_az in zones else next(iter(zones))
        if az not in zones:
            raise validate.Invalid(f"unknown availability zone '{az[:64]}' in region '{region}'")
        return region, az, zones[az]


def load(path: str | Path = "config/lxc.yaml") -> LxcConfig:
    """Load and validate the YAML config (env overrides `LXC__SECTION__KEY=value` apply)."""
    return load_yaml(path, LxcConfig, env_prefix="LXC")
