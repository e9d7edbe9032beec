"""Authentication (spec 001 §5 and ``server.auth``).

Inference keys (``$LLM_PROXY_API_KEYS``) are accepted on ``/v1/*``; admin keys
(``$LLM_PROXY_ADMIN_KEYS``) are the only keys accepted on ``/api/v1/*``, ``/admin/*``
and ``/metrics``. With the admin variable unset the inference keys are used there too,
with a warning at startup. ``LLM_PROXY_DEV_MODE=1`` turns authentication off, loudly.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.requests import Request

from deployments.llm_gateway.config import AuthConfig
from deployments.llm_gateway.errors import GatewayError
from rayfleet.auth import api_key_guard, fingerprint, match_key, presented_key
from rayfleet.logs import get_logger, register_secret

log = get_logger("llm_gateway")


def _keys(var: str) -> list[str]:
    return [k.strip() for k in os.environ.get(var, "").split(",") if k.strip()]


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

    def guard(self, scope: str) -> Callable[[Request], Awaitable[str]]:
        """The FastAPI dependency of ``scope`` (``inference`` or ``admin``); it returns the tenant id.

        Built on the platform guard (``rayfleet.auth``): a missing key is 401 ``missing_api_key``,
        a key of the other scope 403 ``wrong_key_scope``, any other key 401 ``invalid_api_key``.
        """
        allowed = self.inference if scope == "inference" else self.admin
        other = self.admin if scope == "inference" else self.inference

        def failure(request: Request, status: int, message: str) -> Exception:
            key = presented_key(request, "x-api-key", bearer=True)
            if key is None:
                return GatewayError(
                    401, "Missing API key: send 'Authorization: Bearer <key>'", "missing_api_key", error_class="missing"
                )
            if match_key(key, other) is not None:
                return GatewayError(
                    403, f"This key is not valid for {scope} routes", code="wrong_key_scope", error_class="scope"
                )
            return GatewayError(401, "Invalid API key", code="invalid_api_key", error_class="invalid")

        check = api_key_guard(
            allowed, on_failure=failure, component="llm_gateway", header="x-api-key", bearer=True, wrong_status=401
        )

        async def guard(request: Request) -> str:
            if not self.enabled:
                key = presented_key(request, "x-api-key", bearer=True)
                return fingerprint(key) if key else "anonymous"
            return (await check(request)).fingerprint

        return guard
