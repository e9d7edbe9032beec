"""``identity.*``: who may sign in through which OIDC provider, and with which role.

Roles gate the control plane (``access.py``): ``admin`` may do everything, ``viewer`` may only
read (GET), any other role (``default_role`` is ``user``) may not use it at all.
The role of an ID token is ``role_mappings[email]`` (emails compared case-insensitively), else
``default_role``; a token with ``email_verified: false`` is refused, since anyone can claim
an unverified address.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from dataclasses import dataclass
from typing import Any

from deployments.llm_gateway.config import IdentityConfig
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.oidc import OidcProvider, ProviderSettings

ADMIN, VIEWER = "admin", "viewer"
FLOW_TTL = 600


@dataclass(frozen=True)
class Flow:
    """What the login step remembers for the callback (sealed into a cookie, see ``routes/auth.py``)."""

    provider: str
    state: str
    nonce: str
    verifier: str

    @classmethod
    def new(cls, provider: str) -> Flow:
        return cls(provider, secrets.token_urlsafe(24), secrets.token_urlsafe(24), secrets.token_urlsafe(48))

    @property
    def challenge(self) -> str:
        digest = hashlib.sha256(self.verifier.encode()).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class Identity:
    def __init__(self, cfg: IdentityConfig) -> None:
        self.enabled = cfg.enabled
        self.ttl = cfg.session_ttl
        self.default_role = cfg.default_role
        self.mappings = {email.strip().lower(): role for email, role in cfg.role_mappings.items()}
        self.providers: dict[str, OidcProvider] = {}
        if not cfg.enabled:
            return
        for p in cfg.providers:
            client_id = os.environ.get(p.client_id_env, "").strip()
            if not client_id:
                raise ValueError(f"identity.providers.{p.name}: ${p.client_id_env} (the client id) is not set")
            secret = os.environ.get(p.client_secret_env, "").strip() if p.client_secret_env else ""
            if p.client_secret_env and not secret:
                raise ValueError(f"identity.providers.{p.name}: ${p.client_secret_env} (the client secret) is not set")
            settings = ProviderSettings(p.name, p.issuer, client_id, secret, p.audience)
            self.providers[p.name] = OidcProvider(settings)

    def provider(self, name: str) -> OidcProvider:
        if not self.enabled:
            raise GatewayError(
                400, "identity sign-in is disabled (identity.enabled is false)", code="identity_disabled"
            )
        found = self.providers.get(name)
        if found is None:
            raise GatewayError(400, f"unknown identity provider {name[:64]!r}", code="unknown_provider")
        return found

    def role_for(self, claims: dict[str, Any]) -> str:
        email = claims.get("email")
        if "email_verified" in claims and claims["email_verified"] not in (True, "true"):
            raise GatewayError(401, "ID token refused: the email address is not verified", code="invalid_id_token")
        if isinstance(email, str) and email.strip().lower() in self.mappings:
            return self.mappings[email.strip().lower()]
        return self.default_role

    async def sign_in(self, provider_name: str, id_token: str, nonce: str | None = None) -> tuple[str, str]:
        """``(subject, role)`` of a verified ID token."""
        provider = self.provider(provider_name)
        claims = await provider.verify(id_token, nonce=nonce)
        return f"oidc:{provider_name}:{claims['sub']}", self.role_for(claims)


def role_allows(role: str, method: str) -> bool:
    if role == ADMIN:
        return True
    return role == VIEWER and method.upper() in {"GET", "HEAD"}
