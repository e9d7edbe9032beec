"""Signed, expiring control-plane sessions.

A session token is ``rfs1.<payload>.<mac>``: the payload is base64url JSON ``{sid, sub, role,
exp}`` (a random 128-bit id, the subject, the role and the expiry in Unix seconds) and the mac
is HMAC-SHA256 over the purpose and the payload. The key comes from ``$LLM_PROXY_SESSION_KEY``,
else from ``<data_dir>/session.key`` (generated once, mode 0600, like the registry's key).
Every replica of a node reads the same file; set the variable on every node of a multi-node
cluster, or a session signed on one node is refused on the others.

The same sealing protects the short-lived OIDC flow cookie (state, nonce, PKCE verifier), under
another purpose, so one kind of token can never be replayed as the other.

Browsers carry the session in an HttpOnly, SameSite=Strict cookie scoped to the gateway's path
(Secure on https). A cookie is sent by the browser on its own, so a state-changing request
authenticated by it must also carry ``X-CSRF-Token``: an HMAC of the session id, which only a
page that asked ``GET /auth/session`` (same-origin) can know.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import Response

from rayfleet.logs import get_logger
from rayfleet.secrets import load_or_create_key

log = get_logger("llm_gateway")

PREFIX = "rfs1."
COOKIE = "llm_gateway_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SESSION_KEY_ENV = "LLM_PROXY_SESSION_KEY"
SESSION_KEY_FILE = "session.key"
SameSite = Literal["strict", "lax"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Session:
    sid: str
    subject: str
    role: str
    expires_at: int

    def view(self) -> dict[str, Any]:
        return {"subject": self.subject, "role": self.role, "expires_at": self.expires_at}


class SessionSigner:
    """Seals and opens tokens with one HMAC key; knows nothing of revocation (``SessionBoard``)."""

    def __init__(self, key: bytes, clock: Callable[[], float] = time.time) -> None:
        if len(key) < 16:
            raise ValueError("the session key must be at least 16 bytes")
        self._key = key
        self._clock = clock

    @classmethod
    def from_env(cls, key_file: Path, env: str = SESSION_KEY_ENV) -> SessionSigner:
        secret = os.environ.get(env, "").strip()
        if secret:
            return cls(hashlib.sha256(secret.encode()).digest())
        key, created = load_or_create_key(key_file, lambda: secrets.token_hex(32).encode())
        if created:
            log.warning(
                f"${env} is not set: control-plane sessions are signed with a generated key kept in "
                f"{key_file} (mode 0600); set ${env} on every node of a multi-node cluster"
            )
        return cls(key)

    def _mac(self, purpose: str, payload: str) -> str:
        return _b64(hmac.new(self._key, f"{purpose}\0{payload}".encode(), hashlib.sha256).digest())

    def seal(self, purpose: str, data: dict[str, Any], ttl: int) -> str:
        """`data` sealed for `ttl` seconds (its ``exp`` is set here)."""
        data = {**data, "exp": int(self._clock()) + int(ttl)}
        payload = _b64(json.dumps(data, separators=(",", ":"), sort_keys=True).encode())
        return f"{PREFIX}{payload}.{self._mac(purpose, payload)}"

    def open(self, purpose: str, token: str) -> dict[str, Any] | None:
        """The sealed data, or None when the token is malformed, forged or expired."""
        if not token.startswith(PREFIX) or len(token) > 4096:
            return None
        payload, _, mac = token[len(PREFIX) :].partition(".")
        if not payload or not hmac.compare_digest(mac.encode(), self._mac(purpose, payload).encode()):
            return None
        try:
            data = json.loads(_unb64(payload))
        except (ValueError, binascii.Error):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("exp"), int) or data["exp"] <= self._clock():
            return None
        return data

    def issue(self, subject: str, role: str, ttl: int) -> tuple[str, Session]:
        sid = secrets.token_hex(16)
        token = self.seal("session", {"sid": sid, "sub": subject, "role": role}, ttl)
        session = self.verify(token)
        if session is None:  # only with a ttl that is already over
            raise ValueError("session ttl must be positive")
        return token, session

    def verify(self, token: str) -> Session | None:
        data = self.open("session", token)
        if data is None:
            return None
        sid, sub, role = data.get("sid"), data.get("sub"), data.get("role")
        if not (isinstance(sid, str) and isinstance(sub, str) and isinstance(role, str)):
            return None
        return Session(sid, sub, role, data["exp"])

    def csrf_token(self, session: Session) -> str:
        return _b64(hmac.new(self._key, f"csrf\0{session.sid}".encode(), hashlib.sha256).digest())

    def csrf_ok(self, session: Session, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(str(presented).encode(), self.csrf_token(session).encode())


def gateway_path(request: Request) -> str:
    """The path the gateway is mounted at (``/llm`` through Serve, ``/`` on the direct listener)."""
    root = str(request.scope.get("root_path", "")).rstrip("/")
    return root + "/"


def is_https(request: Request) -> bool:
    return request.url.scheme == "https"


def set_cookie(
    response: Response,
    request: Request,
    name: str,
    value: str,
    max_age: int,
    *,
    path: str = "",
    samesite: SameSite = "strict",
) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=path or gateway_path(request),
        httponly=True,
        secure=is_https(request),
        samesite=samesite,
    )


def clear_cookie(
    response: Response, request: Request, name: str, *, path: str = "", samesite: SameSite = "strict"
) -> None:
    response.delete_cookie(
        name, path=path or gateway_path(request), httponly=True, secure=is_https(request), samesite=samesite
    )
