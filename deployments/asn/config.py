"""Configuration of the ASN lookup API (YAML + environment).

Environment variables named by the spec win over the YAML:
  API_SECRET_KEY   the master key (required, >= 32 characters); never read from YAML
  API_RATE_LIMIT   `100`, `100/minute`, `10/second`, `5000/hour` (default 100/minute)
  REDIS_URL        use the Redis Lua limiter instead of the shared actor
Any field can also be set as `ASN__SECTION__KEY=value` (rayfleet.config).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from rayfleet.config import ConfigError, load_yaml
from rayfleet.http import parse_networks
from rayfleet.paths import resolve

MIN_KEY_LENGTH = 32
_RATE = re.compile(r"\s*(\d+)\s*(?:/\s*(\d*)\s*([a-z]+))?\s*", re.IGNORECASE)
_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
}


def parse_rate(text: str) -> tuple[int, float]:
    """`100/minute` → (100, 60.0); a bare number is per minute. Raises ConfigError."""
    match = _RATE.fullmatch(text)
    if not match:
        raise ConfigError(f"API_RATE_LIMIT: cannot parse {text!r} (expected e.g. 100 or 100/minute)")
    count, multiple, unit = match.groups()
    seconds = 60.0
    if unit:
        if unit.lower() not in _UNITS:
            raise ConfigError(f"API_RATE_LIMIT: unknown unit {unit!r} (second, minute, hour, day)")
        seconds = float(_UNITS[unit.lower()] * (int(multiple) if multiple else 1))
    if int(count) < 1 or seconds <= 0:
        raise ConfigError(f"API_RATE_LIMIT: limit and window must be positive, got {text!r}")
    return int(count), seconds


class RateLimitConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(100, ge=1, description="requests per window and client IP")
    window_seconds: float = Field(60.0, gt=0)
    redis_url: str | None = Field(None, description="set → Redis Lua limiter; unset → shared actor")
    on_store_error: Literal["open", "closed"] = Field(
        "open", description="Redis unreachable: serve the request (open) or answer 503 (closed)"
    )
    key_prefix: str = "rayfleet:asn:rl:"
    actor_name: str = "rate_limit_window"
    redis_retry_interval: float = Field(1.0, gt=0, description="seconds before Redis is retried after an error")


class AsnConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    data_dir: Path = Path("var/asn")
    pkg_dir: Path | None = Field(None, description="extracted package; default <data_dir>/pkg")
    prefix_file: str = "ipasn6_20151101.dat.gz"
    fetch_on_start: bool = True
    prefix_path: Path | None = Field(
        None, description="operator's pyasn-format prefix file (.dat or .dat.gz); replaces the package's"
    )
    names_path: Path | None = Field(None, description="operator's asnames.json; default the package's")
    search_max_results: int = Field(100, ge=1, le=1000)
    trusted_proxies: list[str] = Field(
        default_factory=list, description="addresses/CIDRs whose X-Forwarded-For is used"
    )
    rate_limit: RateLimitConfig = Field(default_factory=RateLimitConfig)
    api_key: SecretStr | None = Field(None, exclude=True, description="from API_SECRET_KEY only")

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        try:
            parse_networks(value)
        except ValueError as exc:
            raise ValueError(f"invalid trusted proxy: {exc}") from None
        return value

    @property
    def db_path(self) -> Path:
        return resolve(self.data_dir) / "asn.duckdb"

    @property
    def operator_prefixes(self) -> Path | None:
        return resolve(self.prefix_path) if self.prefix_path else None

    @property
    def operator_names(self) -> Path | None:
        return resolve(self.names_path) if self.names_path else None

    @property
    def package_dir(self) -> Path:
        return resolve(self.pkg_dir) if self.pkg_dir else resolve(self.data_dir) / "pkg"


def validate_api_key(key: SecretStr | None) -> str:
    """The master key, or ConfigError: the API refuses to start without a usable key."""
    value = key.get_secret_value() if key is not None else ""
    if not value:
        raise ConfigError("API_SECRET_KEY is not set: the ASN API does not start without its master key")
    if len(value) < MIN_KEY_LENGTH:
        raise ConfigError(f"API_SECRET_KEY is too short: at least {MIN_KEY_LENGTH} characters are required")
    return value


def load(path: str | Path | None, environ: Mapping[str, str] | None = None) -> AsnConfig:
    """YAML at `path` (None: defaults) + `ASN__*` overrides + the spec's environment variables."""
    env = os.environ if environ is None else environ
    config = load_yaml(path, AsnConfig, env_prefix="ASN", environ=env)
    if config.api_key is not None:
        raise ConfigError("api_key must not be configured in a file; set API_SECRET_KEY")
    updates: dict[str, object] = {}
    if env.get("API_SECRET_KEY"):
        updates["api_key"] = SecretStr(env["API_SECRET_KEY"])
    rate = config.rate_limit
    if env.get("API_RATE_LIMIT"):
        limit, window = parse_rate(env["API_RATE_LIMIT"])
        rate = rate.model_copy(update={"limit": limit, "window_seconds": window})
    if env.get("REDIS_URL"):
        rate = rate.model_copy(update={"redis_url": env["REDIS_URL"]})
    updates["rate_limit"] = rate
    return config.model_copy(update=updates)
