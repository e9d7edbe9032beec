"""Authentication: HTTP Basic or JWT bearer (HS256), single-use refresh rotation, lockout.

Every failure counts against the client's address (socket peer unless a trusted proxy);
5 failures in 5 minutes lock the address (429 + Retry-After), even for the right password.
Tokens issued before the last password change are refused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt

from actors.webfilter.authstate import AuthState
from deployments.webfilter.errors import ApiError
from deployments.webfilter.state import WebfilterState
from deployments.webfilter.store import verify_password
from rayfleet.auth import match_key
from rayfleet.state import call

ALGORITHM = "HS256"


@dataclass(frozen=True)
class Principal:
    username: str
    method: str  # basic | bearer | internal
    claims: dict[str, Any] | None = None


def password_problem(password: str, username: str) -> str | None:
    """Why `password` is too weak, or None."""
    if len(password) < 10:
        return "password must be at least 10 characters"
    if len(password) > 256:
        return "password must be at most 256 characters"
    missing = [
        name
        for name, pattern in (
            ("a lower-case letter", r"[a-z]"),
            ("an upper-case letter", r"[A-Z]"),
            ("a digit", r"[0-9]"),
            ("a special character", r"[^A-Za-z0-9]"),
        )
        if not re.search(pattern, password)
    ]
    if missing:
        return "password needs " + ", ".join(missing)
    if username.lower() in password.lower():
        return "password must not contain the user name"
    return None


def _secret(context: WebfilterState) -> str:
    return context.store.meta("jwt_secret")


def issue_pair(context: WebfilterState, username: str) -> dict[str, Any]:
    now = int(time.time())
    cfg = context.config.auth
    secret = _secret(context)

    def token(kind: str, ttl: int) -> str:
        claims = {"sub": username, "type": kind, "jti": secrets.token_hex(16), "iat": now, "exp": now + ttl}
        return jwt.encode(claims, secret, algorithm=ALGORITHM)

    return {
        "access_token": token("access", cfg.access_ttl_seconds),
        "refresh_token": token("refresh", cfg.refresh_ttl_seconds),
        "token_type": "Bearer",
        "expires_in": cfg.access_ttl_seconds,
    }


async def refuse_if_locked(context: WebfilterState, ip: str) -> None:
    wait = await call(context.auth, AuthState.retry_after, ip)
    if wait:
        raise ApiError(429, "too many failed authentication attempts", {"Retry-After": str(wait)})


async def _fail(context: WebfilterState, ip: str, username: str | None, reason: str) -> ApiError:
    wait = await call(context.auth, AuthState.record_failure, ip)
    await context.db(context.store.audit, username, ip, "login_failure", reason)
    if wait:
        return ApiError(429, "too many failed authentication attempts", {"Retry-After": str(wait)})
    return ApiError(401, "authentication failed", {"WWW-Authenticate": 'Basic realm="webfilter", Bearer'})


_VERIFIED: dict[str, float] = {}
VERIFIED_TTL = 60.0


def _verified_key(username: str, password: str, row: Any) -> str:
    """Names a (user, password, password version) that scrypt accepted; the password itself is not kept."""
    material = f"{username}\0{password}\0{row['password_hash']}".encode()
    return hashlib.sha256(material).hexdigest()


async def check_password(context: WebfilterState, ip: str, username: str, password: str) -> None:
    """scrypt-verify (about 50 ms, off the event loop); a success is remembered for a minute so HTTP Basic
    clients do not pay scrypt on every request. A password change alters the key (new hash)."""
    await refuse_if_locked(context, ip)
    row = await context.db(context.store.user, username)
    if row is not None:
        key = _verified_key(username, password, row)
        if _VERIFIED.get(key, 0.0) > time.monotonic():
            return
    if row is None or not await context.db(verify_password, password, row["password_hash"]):
        raise await _fail(context, ip, username, "bad credentials")
    if len(_VERIFIED) > 1000:
        _VERIFIED.clear()
    _VERIFIED[key] = time.monotonic() + VERIFIED_TTL


def _stale(message: str) -> ApiError:
    """A well-signed token that is no longer valid: refused, but not counted as a guess."""
    return ApiError(401, message, {"WWW-Authenticate": 'Bearer error="invalid_token"'})


async def decode_token(context: WebfilterState, ip: str, token: str, kind: str) -> dict[str, Any]:
    """Claims of a valid token of `kind`. Forged or malformed tokens count against the client's address;
    expired, revoked or superseded (password changed) ones only get 401."""
    try:
        claims: dict[str, Any] = jwt.decode(
            token, _secret(context), algorithms=[ALGORITHM], options={"require": ["exp", "iat", "jti", "sub"]}
        )
    except jwt.ExpiredSignatureError:
        raise _stale(f"expired {kind} token") from None
    except jwt.PyJWTError:
        raise await _fail(context, ip, None, f"invalid {kind} token") from None
    if claims.get("type") != kind:
        raise await _fail(context, ip, None, f"not a {kind} token")
    row = await context.db(context.store.user, claims["sub"])
    if row is None or claims["iat"] < int(row["updated_at"]):
        raise _stale("token issued before the last password change")
    if await call(context.auth, AuthState.is_revoked, claims["jti"]):
        raise _stale(f"revoked {kind} token")
    return claims


def _basic(header: str) -> tuple[str, str] | None:
    try:
        raw = base64.b64decode(header, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = raw.partition(":")
    return (user, password) if sep else None


async def authenticate(context: WebfilterState, ip: str, header: str) -> Principal:
    """The user behind an `Authorization` header (HTTP Basic or a bearer access token) from `ip`."""
    scheme, _, value = header.partition(" ")
    await refuse_if_locked(context, ip)
    if scheme.lower() == "basic":
        pair = _basic(value.strip())
        if pair is None:
            raise await _fail(context, ip, None, "malformed basic credentials")
        await check_password(context, ip, *pair)
        return Principal(pair[0], "basic")
    if scheme.lower() == "bearer" and value.strip():
        claims = await decode_token(context, ip, value.strip(), "access")
        return Principal(claims["sub"], "bearer", claims)
    raise ApiError(401, "authentication required", {"WWW-Authenticate": 'Basic realm="webfilter", Bearer'})


async def authenticate_alert(context: WebfilterState, ip: str, header: str) -> Principal:
    """INTERNAL_ALERT_TOKEN as a bearer (this route only); unset: normal admin authentication."""
    token = context.config.internal_alert_token
    if token is None:
        return await authenticate(context, ip, header)
    supplied = header[7:].strip() if header[:7].lower() == "bearer " else None
    if match_key(supplied, [token.get_secret_value()]) is not None:
        return Principal("internal", "internal")
    raise ApiError(401, "invalid internal alert token")
