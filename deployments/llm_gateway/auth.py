"""Authentication (spec 001 §5 and ``server.auth``).

Inference keys (``$LLM_PROXY_API_KEYS``) are accepted on ``/v1/*``; admin keys
(``$LLM_PROXY_ADMIN_KEYS``) are the only keys accepted on ``/api/v1/*``, ``/admin/*``
and ``/metrics``. With the admin variable unset the inference keys are used there too,
with a warning at startup. ``LLM_PROXY_DEV_MODE=1`` turns authentication off, loudly.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from deployments.llm_gateway.config import AuthConfig
from deployments.llm_gateway.errors import GatewayError
from rayfleet.logs import get_logger, register_secret
from rayfleet.security import constant_time_equals

log = get_logger("llm_gateway")


def _keys(var: str) -> list[str]:
    return [k.strip() for k in os.environ.get(var, "").split(",") if k.strip()]


def tenant_of(key: str | None) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16] if key else "anonymous"


@dataclass
class Authenticator:
    enabled: bool
    inference: list[str] = field(default_factory=list)
    admin: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, cfg: AuthConfig) -> Authenticator:
        warnings: list[str] = []
        enabled = cfg.enabled
        if os.environ.get("LLM_PROXY_DEV_MODE") == "1":
            enabled = False
            msg = (
                "LLM_PROXY_DEV_MODE=1: AUTHENTICATION IS DISABLED on every route. "
                "Never run like this where anyone else can reach the port."
            )
            log.warning("!" * 20 + " " + msg + " " + "!" * 20)
            warnings.append(msg)
        elif not cfg.enabled:
            msg = "server.auth.enabled is false: authentication is disabled on every route"
            log.warning(msg)
            warnings.append(msg)
        inference = _keys(cfg.api_keys_env)
        admin = _keys(cfg.admin_keys_env)
        if enabled and not admin:
            msg = f"${cfg.admin_keys_env} is not set: admin routes accept the inference keys"
            log.warning(msg)
            warnings.append(msg)
            admin = list(inference)
        if enabled and not inference:
            msg = f"${cfg.api_keys_env} is not set: every inference request will be refused (401)"
            log.warning(msg)
            warnings.append(msg)
        for key in inference + admin:
            register_secret(key)
        return cls(enabled, inference, admin, warnings)

    @staticmethod
    def extract(headers: dict[str, str] | object) -> str | None:
        get = headers.get  # type: ignore[attr-defined]
        bearer = get("authorization") or ""
        if bearer[:7].lower() == "bearer ":
            return bearer[7:].strip() or None
        return get("x-api-key") or None

    @staticmethod
    def _match(key: str, keys: list[str]) -> bool:
        found = False
        for candidate in keys:
            found |= constant_time_equals(key, candidate)
        return found

    def check(self, key: str | None, scope: str) -> str:
        """Validate ``key`` for ``scope`` (``inference`` or ``admin``); returns the tenant id."""
        if not self.enabled:
            return tenant_of(key) if key else "anonymous"
        if not key:
            raise GatewayError(
                401,
                "Missing API key: send 'Authorization: Bearer <key>'",
                code="missing_api_key",
                error_class="missing",
            )
        allowed = self.inference if scope == "inference" else self.admin
        if self._match(key, allowed):
            return tenant_of(key)
        other = self.admin if scope == "inference" else self.inference
        if self._match(key, other):
            raise GatewayError(
                403, f"This key is not valid for {scope} routes", code="wrong_key_scope", error_class="scope"
            )
        raise GatewayError(401, "Invalid API key", code="invalid_api_key", error_class="invalid")
