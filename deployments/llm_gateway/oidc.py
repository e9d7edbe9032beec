"""One OpenID Connect provider: discovery, signing keys, ID-token checks and the code exchange.

- Discovery: ``<issuer>/.well-known/openid-configuration``; its ``issuer`` must equal the
  configured one. Fetched once, then kept.
- Keys: the document's ``jwks_uri``, cached. A token whose ``kid`` is not cached triggers a
  refetch (a provider rotated its keys), at most once every ``min_refetch`` seconds, so a
  stream of tokens with made-up ``kid`` values cannot turn the gateway into a load generator.
- ID tokens: RS256 (RSA keys) and ES256 (P-256 keys) only. The algorithm is taken from the
  key, never from the token, and must match the token's header: ``none`` and HMAC algorithms
  are refused whatever the key. ``exp``, ``iat`` and ``iss``/``aud`` are required, ``nbf`` is
  honoured, with ``LEEWAY`` seconds of clock skew; ``aud`` must contain the provider's
  ``audience`` (its client id unless set) and, with several audiences, ``azp`` must be the
  client id. The code flow also checks the ``nonce`` it sent.

Every failure is a `GatewayError`: 401 ``invalid_id_token`` saying why, or 502
``identity_provider_unavailable`` when the provider cannot be reached.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import jwt

from deployments.llm_gateway.errors import GatewayError
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

ALGORITHMS = {"RSA": "RS256", "EC": "ES256"}
LEEWAY = 60
HTTP_TIMEOUT = 5.0
MIN_REFETCH = 10.0
MAX_DOCUMENT = 256 * 1024


@dataclass(frozen=True)
class ProviderSettings:
    name: str
    issuer: str
    client_id: str
    client_secret: str = ""
    audience: str = ""


def _invalid(why: str) -> GatewayError:
    return GatewayError(401, f"ID token refused: {why}", code="invalid_id_token", error_class="id_token")


def _unavailable(name: str, what: str) -> GatewayError:
    return GatewayError(
        502, f"identity provider {name!r} is unavailable ({what})", code="identity_provider_unavailable"
    )


class OidcProvider:
    def __init__(
        self,
        settings: ProviderSettings,
        *,
        min_refetch: float = MIN_REFETCH,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.min_refetch = min_refetch
        self._clock = clock
        self._metadata: dict[str, Any] | None = None
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()
        self.jwks_fetches = 0

    async def _get_json(self, url: str, what: str, **kw: Any) -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, trust_env=False) as client:
                r = await client.request(kw.pop("method", "GET"), url, **kw)
        except httpx.HTTPError as exc:
            log.warning("identity provider request failed", extra={"provider": self.settings.name, "what": what})
            raise _unavailable(self.settings.name, f"{what}: {type(exc).__name__}") from None
        if len(r.content) > MAX_DOCUMENT:
            raise _unavailable(self.settings.name, f"{what}: answer too large")
        try:
            data = r.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise _unavailable(self.settings.name, f"{what}: HTTP {r.status_code}, not a JSON object")
        if r.status_code != 200:
            if what == "token exchange":
                error = str(data.get("error", ""))[:100]
                raise GatewayError(
                    401, f"the provider refused the authorization code ({error})", code="code_exchange_failed"
                )
            raise _unavailable(self.settings.name, f"{what}: HTTP {r.status_code}")
        return data

    async def metadata(self) -> dict[str, Any]:
        if self._metadata is None:
            url = self.settings.issuer + "/.well-known/openid-configuration"
            doc = await self._get_json(url, "discovery")
            if doc.get("issuer") != self.settings.issuer:
                raise _unavailable(self.settings.name, "discovery document names another issuer")
            for field in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                if not isinstance(doc.get(field), str) or not doc[field].startswith(("http://", "https://")):
                    raise _unavailable(self.settings.name, f"discovery document has no {field}")
            self._metadata = doc
        return self._metadata

    async def _refetch_keys(self) -> None:
        doc = await self.metadata()
        data = await self._get_json(doc["jwks_uri"], "jwks")
        self.jwks_fetches += 1
        self._fetched_at = self._clock()
        keys: dict[str, jwt.PyJWK] = {}
        for jwk in data.get("keys", []) if isinstance(data.get("keys"), list) else []:
            if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig" or not isinstance(jwk.get("kid"), str):
                continue
            alg = ALGORITHMS.get(str(jwk.get("kty")))
            if alg is None or jwk.get("alg", alg) != alg or (alg == "ES256" and jwk.get("crv") != "P-256"):
                continue
            try:
                keys[jwk["kid"]] = jwt.PyJWK(jwk, algorithm=alg)
            except (jwt.PyJWKError, ValueError, TypeError):
                continue
        self._keys = keys

    async def key(self, kid: str) -> jwt.PyJWK:
        async with self._lock:
            if kid not in self._keys:
                due = self._fetched_at is None or self._clock() - self._fetched_at >= self.min_refetch
                if due:
                    await self._refetch_keys()
            found = self._keys.get(kid)
        if found is None:
            raise _invalid(f"signing key {kid!r} is not published by the issuer")
        return found

    @property
    def expected_audience(self) -> str:
        return self.settings.audience or self.settings.client_id

    async def verify(self, id_token: str, nonce: str | None = None) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.PyJWTError:
            raise _invalid("not a JWT") from None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ALGORITHMS.values():
            raise _invalid(f"algorithm {alg!r} is not accepted (RS256, ES256)")
        if not isinstance(kid, str) or not kid:
            raise _invalid("no key id (kid) in the header")
        key = await self.key(kid)
        if key.algorithm_name != alg:
            raise _invalid(f"algorithm {alg!r} does not match the key {kid!r}")
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key.key,
                algorithms=[alg],
                audience=self.expected_audience,
                issuer=self.settings.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise _invalid("expired") from None
        except jwt.ImmatureSignatureError:
            raise _invalid("not valid yet (nbf/iat in the future)") from None
        except jwt.InvalidAudienceError:
            raise _invalid("wrong audience") from None
        except jwt.InvalidIssuerError:
            raise _invalid("wrong issuer") from None
        except jwt.InvalidSignatureError:
            raise _invalid("bad signature") from None
        except jwt.MissingRequiredClaimError as exc:
            raise _invalid(f"missing claim {exc.claim!r}") from None
        except jwt.PyJWTError as exc:
            raise _invalid(type(exc).__name__) from None
        aud = claims.get("aud")
        if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") != self.settings.client_id:
            raise _invalid("several audiences and azp is not the client id")
        if nonce is not None and claims.get("nonce") != nonce:
            raise _invalid("nonce mismatch")
        return claims

    async def exchange(self, code: str, redirect_uri: str, verifier: str) -> str:
        """The ID token for an authorization code (client_secret_post when a secret is set)."""
        doc = await self.metadata()
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": self.settings.client_id,
            "code_verifier": verifier,
        }
        if self.settings.client_secret:
            form["client_secret"] = self.settings.client_secret
        answer = await self._get_json(
            doc["token_endpoint"], "token exchange", method="POST", data=form, headers={"Accept": "application/json"}
        )
        id_token = answer.get("id_token")
        if not isinstance(id_token, str):
            raise _invalid("the token endpoint returned no id_token")
        return id_token
