"""One API-key guard for every component.

`api_key_guard` returns a FastAPI dependency that reads a key from a header (or an
``Authorization: Bearer`` value), compares it in constant time with every configured
key, logs a failure with the client's address and never the key, and raises the
component's own error (its error body is the component's business, not ours).

    guard = api_key_guard(lambda: [config.api_key], header="X-API-Key",
                          on_failure=lambda request, status, message: MyError(status, message),
                          component="asn")
    router = APIRouter(dependencies=[Depends(guard)])

A handler that needs to know which key matched takes the dependency's return value:
an `AuthResult` with the key's index and a non-secret fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fastapi import Request, Security
from fastapi.security import APIKeyHeader, HTTPBearer

from rayfleet.http import Network, client_ip
from rayfleet.logs import get_logger
from rayfleet.security import match_key

__all__ = ["AuthResult", "FailureFactory", "api_key_guard", "fingerprint", "match_key", "presented_key"]

FailureFactory = Callable[[Request, int, str], Exception]
Keys = Sequence[str] | Callable[[], Sequence[str]]


@dataclass(frozen=True)
class AuthResult:
    """Who was let in: the matching key's position in the configured list, and its fingerprint."""

    index: int
    fingerprint: str


def fingerprint(key: str) -> str:
    """A short, non-reversible name for a key (safe to log and to use as a tenant id)."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def presented_key(request: Request, header: str | None, bearer: bool) -> str | None:
    """The key a request presents: the named header first, then a bearer token when allowed."""
    if header:
        value = request.headers.get(header)
        if value:
            return value.strip() or None
    if bearer:
        auth = request.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            return auth[7:].strip() or None
    return None


def _resolve(keys: Keys) -> Sequence[str]:
    return keys() if callable(keys) else keys


def api_key_guard(
    keys: Keys,
    *,
    on_failure: FailureFactory,
    component: str,
    header: str | None = "X-API-Key",
    bearer: bool = False,
    missing_status: int = 401,
    wrong_status: int = 403,
    missing_message: str = "missing API key",
    wrong_message: str = "invalid API key",
    trusted_proxies: list[Network] | None = None,
    description: str | None = None,
) -> Callable[..., Awaitable[AuthResult]]:
    """A FastAPI dependency that lets a request in only with one of `keys`.

    `keys` may be a callable so a component can rotate keys without rebuilding its
    routes. An empty key list refuses everything (a service without a configured key
    must not accept an empty one). Failures raise ``on_failure(request, status, message)``
    with `missing_status` when no key was presented and `wrong_status` when it did not match.
    The header (or the bearer scheme) is declared as a security scheme, so the component's
    OpenAPI document and its docs page show how to authenticate.
    """
    log = get_logger(component)
    scheme: APIKeyHeader | HTTPBearer = (
        APIKeyHeader(name=header, auto_error=False, description=description)
        if header
        else HTTPBearer(auto_error=False, description=description)
    )

    async def guard(request: Request, _declared: object = Security(scheme)) -> AuthResult:
        supplied = presented_key(request, header, bearer)
        configured = _resolve(keys)
        index = match_key(supplied, configured) if supplied else None
        if index is not None:
            return AuthResult(index, fingerprint(configured[index]))
        status, message = (wrong_status, wrong_message) if supplied else (missing_status, missing_message)
        log.warning(
            "authentication failed",
            extra={
                "client_ip": client_ip(request, trusted_proxies),
                "path": request.url.path,
                "reason": "wrong key" if supplied else "no key",
            },
        )
        raise on_failure(request, status, message)

    return guard
