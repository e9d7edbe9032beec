"""A small OpenID Connect issuer for tests, served on loopback over real HTTP.

It speaks the parts of the protocol the gateway uses: the discovery document, a JWKS,
an authorization endpoint that approves at once as ``issuer.user`` (the test sets who
signs in) and a token endpoint that exchanges a code once, checking the client, the
redirect URI and the PKCE verifier. ID tokens are signed with real RSA (RS256) and
P-256 (ES256) keys; ``mint`` lets a test sign any claims with any key, published or not.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    @classmethod
    def rsa(cls, kid: str) -> SigningKey:
        return cls(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))

    @classmethod
    def ec(cls, kid: str) -> SigningKey:
        return cls(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self) -> dict[str, Any]:
        algo = jwt.algorithms.RSAAlgorithm if self.alg == "RS256" else jwt.algorithms.ECAlgorithm
        data = json.loads(algo.to_jwk(self.private.public_key()))
        return {**data, "kid": self.kid, "use": "sig", "alg": self.alg}


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    nonce: str
    user: dict[str, Any]


@dataclass
class OidcIssuer:
    client_id: str = "gateway-client"
    client_secret: str = ""
    user: dict[str, Any] = field(default_factory=lambda: {"sub": "u-1", "email": "ada@example.test"})
    keys: list[SigningKey] = field(default_factory=lambda: [SigningKey.rsa("rsa-1"), SigningKey.ec("ec-1")])
    url: str = ""
    jwks_hits: int = 0
    token_requests: list[dict[str, str]] = field(default_factory=list)
    _grants: dict[str, _Grant] = field(default_factory=dict)
    _server: uvicorn.Server | None = None
    _task: asyncio.Task[Any] | None = None

    def key(self, kid: str) -> SigningKey:
        return next(k for k in self.keys if k.kid == kid)

    def mint(self, key: SigningKey | None = None, *, headers: dict[str, Any] | None = None, **claims: Any) -> str:
        """An ID token for ``self.user`` with sensible claims; keyword arguments override (None drops)."""
        key = key or self.keys[0]
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.url,
            "aud": self.client_id,
            "iat": now,
            "exp": now + 300,
            **self.user,
            **claims,
        }
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key.private, algorithm=key.alg, headers={"kid": key.kid, **(headers or {})})

    def app(self) -> Starlette:
        async def discovery(request: Request) -> Response:
            return JSONResponse(
                {
                    "issuer": self.url,
                    "authorization_endpoint": self.url + "/authorize",
                    "token_endpoint": self.url + "/token",
                    "jwks_uri": self.url + "/jwks",
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["RS256", "ES256"],
                    "code_challenge_methods_supported": ["S256"],
                }
            )

        async def jwks(request: Request) -> Response:
            self.jwks_hits += 1
            return JSONResponse({"keys": [k.jwk() for k in self.keys]})

        async def authorize(request: Request) -> Response:
            q = request.query_params
            if q.get("response_type") != "code" or q.get("client_id") != self.client_id:
                return JSONResponse({"error": "unauthorized_client"}, status_code=400)
            if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                return JSONResponse({"error": "invalid_request", "error_description": "PKCE S256 required"}, 400)
            code = secrets.token_urlsafe(16)
            self._grants[code] = _Grant(
                self.client_id, q["redirect_uri"], q["code_challenge"], q.get("nonce", ""), dict(self.user)
            )
            back = {"code": code, "state": q.get("state", "")}
            return RedirectResponse(q["redirect_uri"] + "?" + urlencode(back), status_code=302)

        async def token(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            self.token_requests.append(form)
            grant = self._grants.pop(form.get("code", ""), None)
            if grant is None or form.get("grant_type") != "authorization_code":
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            if form.get("client_id") != grant.client_id or (
                self.client_secret and form.get("client_secret") != self.client_secret
            ):
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            verifier = form.get("code_verifier", "").encode()
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
            if form.get("redirect_uri") != grant.redirect_uri or challenge != grant.challenge:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            saved, self.user = self.user, grant.user
            try:
                id_token = self.mint(nonce=grant.nonce or None)
            finally:
                self.user = saved
            return JSONResponse(
                {"id_token": id_token, "access_token": secrets.token_urlsafe(16), "token_type": "Bearer"}
            )

        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", discovery),
                Route("/jwks", jwks),
                Route("/authorize", authorize),
                Route("/token", token, methods=["POST"]),
            ]
        )

    async def start(self) -> OidcIssuer:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(self.app(), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._task = asyncio.get_running_loop().create_task(self._server.serve())
        for _ in range(500):
            if self._server.started:
                return self
            await asyncio.sleep(0.02)
        raise RuntimeError("the OIDC issuer did not start")

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await asyncio.wait_for(self._task, 10)
