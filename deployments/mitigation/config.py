"""Configuration of the mitigation fleet (YAML + environment).

Environment variables named by the spec win over the YAML:
  MANAGEMENT_API_KEY  the `X-Service-API-Key` every request must carry (required, >= 32 characters;
                      documentation example keys are refused)
  API_SECRET_KEY      the ASN API's key, used to fetch country prefixes for geo_block
  MITIGATION_WEBHOOK_SECRET  the HMAC key that signs webhooks (required when they are enabled;
                      read by the actors themselves, never passed to them)
Any field can also be set as `MITIGATION__SECTION__KEY=value` (rayfleet.config).
`origin: serve` and `asn_api_url: serve` resolve to this machine's Serve address
(`RAYFLEET_HOST`/`RAYFLEET_PORT`, default 127.0.0.1:8000).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from actors.mitigation.settings import FleetSettings
from actors.mitigation.webhooks import SECRET_ENV
from rayfleet.config import ConfigError, load_yaml

MIN_KEY_LENGTH = 32
EXAMPLE_KEYS = frozenset(
    {
        "your-api-key",
        "your-api-key-here",
        "your_api_key",
        "api_key",
        "<api_key>",
        "changeme",
        "change-me",
        "secret",
        "${management_api_key}",
        "${management_token}",
        "secbeat-management-key",
        "test-api-key",
    }
)


class MitigationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fleet: FleetSettings = Field(default_factory=FleetSettings)
    fleet_actor: str = "mitigation_fleet"
    api_key: SecretStr | None = Field(None, exclude=True, description="from MANAGEMENT_API_KEY only")


def validate_api_key(key: SecretStr | None) -> str:
    value = key.get_secret_value() if key is not None else ""
    if not value:
        raise ConfigError("MANAGEMENT_API_KEY is not set: the mitigation API does not start without it")
    if value.strip().lower() in EXAMPLE_KEYS:
        raise ConfigError("MANAGEMENT_API_KEY is a documentation example key: generate your own")
    if len(value) < MIN_KEY_LENGTH:
        raise ConfigError(f"MANAGEMENT_API_KEY is too short: at least {MIN_KEY_LENGTH} characters are required")
    return value


def _serve_address(env: Mapping[str, str]) -> str:
    return f"{env.get('RAYFLEET_HOST', '127.0.0.1')}:{env.get('RAYFLEET_PORT', '8000')}"


def load(path: str | Path | None, environ: Mapping[str, str] | None = None) -> MitigationConfig:
    env = os.environ if environ is None else environ
    config = load_yaml(path, MitigationConfig, env_prefix="MITIGATION", environ=env)
    if config.api_key is not None:
        raise ConfigError("api_key must not be configured in a file; set MANAGEMENT_API_KEY")
    fleet = config.fleet
    if fleet.webhooks.enabled and fleet.webhooks.endpoints and not env.get(SECRET_ENV, "").strip():
        raise ConfigError(f"webhooks are enabled but {SECRET_ENV} is not set: they are sent signed only")
    node = fleet.node
    if node.origin == "serve":
        node = node.model_copy(update={"origin": _serve_address(env)})
    updates: dict[str, object] = {"node": node, "asn_api_key": env.get("API_SECRET_KEY", "")}
    if fleet.asn_api_url == "serve":
        updates["asn_api_url"] = f"http://{_serve_address(env)}/asn"
    fleet = fleet.model_copy(update=updates)
    key = SecretStr(env["MANAGEMENT_API_KEY"]) if env.get("MANAGEMENT_API_KEY") else None
    return config.model_copy(update={"fleet": fleet, "api_key": key})
