"""Sign-in and sign-out of the control plane (``deployments.llm_gateway.access``).

| Method | Path | Answer |
|---|---|---|
| GET | /auth/providers | ``{enabled, providers: [{name, login}]}``, public |
| POST | /auth/key | body ``{admin_key}``: an admin session in the cookie; ``{subject, role, expires_at, csrf_token}``; rate-limited per client address |
| GET | /auth/session | the caller's session (cookie or bearer) with its ``csrf_token``; 401 without one |
| POST | /auth/logout | revokes the session on every replica and clears the cookie |
| POST | /auth/token | body ``{provider, id_token}``: ``{token, token_type, role, subject, expires_at, expires_in}`` |
| GET | /auth/oidc/{provider}/login | 302 to the provider (authorization code, PKCE S256, state, nonce) |
| GET | /auth/oidc/{provider}/callback | code exchange, ID-token checks, session cookie, 303 to ``ui/registry`` |
"""

from __future__ import annotations

import hmac
import math
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from actors.llm_gateway import RateLimiter
from deployments.llm_gateway.access import ControlAccess
from deployments.llm_gateway.body import read_capped
from deployments.llm_gateway.errors import GatewayError, json_object
from deployments.llm_gateway.identity import ADMIN, FLOW_TTL, Flow
from deployments.llm_gateway.routes.common import Gateway
from deployments.llm_gateway.sessions import COOKIE, Session, clear_cookie, gateway_path, set_cookie
from rayfleet.auth import fingerprint, match_key
from rayfleet.http import client_ip
from rayfleet.logs import get_logger
from rayfleet.state import call

log = get_logger("llm_gateway")

FLOW_COOKIE = "llm_gateway_oidc"
MAX_BODY = 64 * 1024
SIGN_IN_PERIOD = 60.0  # seconds over which identity.key_sign_in_per_minute attempts refill


def _text(data: dict[str, Any], field: str, limit: int = 16384) -> str:
    value = data.get(field)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise GatewayError(422, f"{field}: a non-empty string is required", code="validation_error")
    return value


def _flow_path(request: Request) -> str:
    return gateway_path(request) + "auth/oidc/"


def _access(gateway: Gateway) -> ControlAccess:
    return gateway.access


Access = Annotated[ControlAccess, Depends(_access)]

router = APIRouter(tags=["sign-in"])


def _signed_in(access: ControlAccess, session: Session) -> dict[str, Any]:
    return {**session.view(), "csrf_token": access.signer.csrf_token(session)}


def _with_cookie(access: ControlAccess, request: Request, body: dict[str, Any], token: str) -> JSONResponse:
    response = JSONResponse(body)
    set_cookie(response, request, COOKIE, token, access.identity.ttl)
    return response


@router.get("/auth/providers")
async def providers(access: Access) -> dict[str, Any]:
    identity = access.identity
    names = sorted(identity.providers) if identity.enabled else []
    return {"enabled": identity.enabled, "providers": [{"name": n, "login": f"auth/oidc/{n}/login"} for n in names]}


async def _attempt(gateway: Gateway, request: Request) -> str:
    """Spend one sign-in attempt of the client's address (cluster-wide bucket in ``RateLimiter``),
    or refuse with 429; returns the bucket, so a successful sign-in can give its attempt back."""
    per_minute = gateway.config.identity.key_sign_in_per_minute
    bucket = f"sign-in|{client_ip(request)}"
    granted, retry_after = await call(
        gateway.handles.ratelimit, RateLimiter.acquire, bucket, float(per_minute), SIGN_IN_PERIOD, 1.0, 1.0
    )
    if not granted:
        log.warning("sign-in attempts rate-limited", extra={"client_ip": client_ip(request)})
        raise GatewayError(
            429,
            "Too many sign-in attempts from this address; try again later",
            code="sign_in_rate_limited",
            headers={"Retry-After": str(max(1, math.ceil(retry_after)))},
        )
    return bucket


@router.post("/auth/key")
async def key_sign_in(request: Request, access: Access, gateway: Gateway) -> JSONResponse:
    """Admin keys only. Any other key (an inference key included) gets the same 401 as an unknown one,
    and every address has ``identity.key_sign_in_per_minute`` attempts (successes are given back)."""
    data = json_object(await read_capped(request, MAX_BODY))
    key = _text(data, "admin_key", 4096)
    bucket = await _attempt(gateway, request)
    auth = access.auth
    if auth.enabled and match_key(key, auth.admin) is None:
        log.warning("sign-in with a wrong key", extra={"client_ip": client_ip(request), "path": request.url.path})
        raise GatewayError(401, "Invalid admin key", code="invalid_api_key", error_class="invalid")
    await call(gateway.handles.ratelimit, RateLimiter.release, bucket, 1.0)
    token, session = access.signer.issue("key:" + fingerprint(key), ADMIN, access.identity.ttl)
    return _with_cookie(access, request, _signed_in(access, session), token)


@router.get("/auth/session")
async def current(request: Request, access: Access) -> dict[str, Any]:
    found = await access.session(request)
    if found is None:
        raise GatewayError(401, "Not signed in", code="invalid_session", error_class="session")
    return _signed_in(access, found[0])


@router.post("/auth/logout")
async def logout(request: Request, access: Access) -> Response:
    found = None
    try:
        found = await access.session(request)
    except GatewayError as exc:
        if exc.code != "invalid_session":
            raise
    revoked = False
    if found is not None:
        session, from_cookie = found
        if from_cookie:
            access.check_csrf(request, session)
        revoked = await access.revoke(session)
    response = JSONResponse({"signed_out": True, "revoked": revoked})
    clear_cookie(response, request, COOKIE)
    return response


@router.post("/auth/token")
async def token_sign_in(request: Request, access: Access) -> dict[str, Any]:
    data = json_object(await read_capped(request, MAX_BODY))
    provider = _text(data, "provider", 64)
    identity = access.identity
    subject, role = await identity.sign_in(provider, _text(data, "id_token"))
    token, session = access.signer.issue(subject, role, identity.ttl)
    return {
        "token": token,
        "token_type": "session",
        "expires_in": identity.ttl,
        **session.view(),
    }


@router.get("/auth/oidc/{provider}/login")
async def login(request: Request, provider: str, access: Access) -> Response:
    oidc = access.identity.provider(provider)
    meta = await oidc.metadata()
    flow = Flow.new(provider)
    query = urlencode(
        {
            "response_type": "code",
            "client_id": oidc.settings.client_id,
            "redirect_uri": redirect_uri(request, provider),
            "scope": "openid email profile",
            "state": flow.state,
            "nonce": flow.nonce,
            "code_challenge": flow.challenge,
            "code_challenge_method": "S256",
        }
    )
    sep = "&" if "?" in meta["authorization_endpoint"] else "?"
    response = RedirectResponse(meta["authorization_endpoint"] + sep + query, status_code=302)
    sealed = access.signer.seal(
        "oidc-flow",
        {"provider": flow.provider, "state": flow.state, "nonce": flow.nonce, "verifier": flow.verifier},
        FLOW_TTL,
    )
    # Lax, not Strict: the callback is a top-level navigation coming back from the provider's site.
    set_cookie(response, request, FLOW_COOKIE, sealed, FLOW_TTL, path=_flow_path(request), samesite="lax")
    return response


def _flow_of(request: Request, provider: str, access: ControlAccess) -> tuple[dict[str, Any], str]:
    """The sealed sign-in flow this callback answers, checked against its state, and the code."""
    params = request.query_params
    if params.get("error"):
        raise GatewayError(401, f"the provider refused the sign-in ({params['error'][:100]})", code="sign_in_refused")
    flow = access.signer.open("oidc-flow", request.cookies.get(FLOW_COOKIE, ""))
    state = params.get("state", "")
    if (
        flow is None
        or flow.get("provider") != provider
        or not state
        or not hmac.compare_digest(state.encode(), str(flow.get("state")).encode())
    ):
        raise GatewayError(400, "sign-in state is missing, expired or does not match", code="invalid_state")
    code = params.get("code", "")
    if not code or len(code) > 4096:
        raise GatewayError(400, "the callback has no authorization code", code="invalid_state")
    return flow, code


@router.get("/auth/oidc/{provider}/callback")
async def callback(request: Request, provider: str, access: Access) -> Response:
    identity = access.identity
    oidc = identity.provider(provider)
    flow, code = _flow_of(request, provider, access)
    id_token = await oidc.exchange(code, redirect_uri(request, provider), str(flow["verifier"]))
    subject, role = await identity.sign_in(provider, id_token, nonce=str(flow["nonce"]))
    token, _ = access.signer.issue(subject, role, identity.ttl)
    response = RedirectResponse(gateway_path(request) + "ui/registry", status_code=303)
    set_cookie(response, request, COOKIE, token, identity.ttl)
    clear_cookie(response, request, FLOW_COOKIE, path=_flow_path(request), samesite="lax")
    return response


def redirect_uri(request: Request, provider: str) -> str:
    """Where the provider sends the browser back: this gateway as the browser reached it."""
    return str(request.base_url).rstrip("/") + f"/auth/oidc/{provider}/callback"
