"""Login, token refresh, logout, password change, WebSocket tokens, liveness, metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from actors.webfilter.authstate import AuthState
from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter import auth
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, errors
from deployments.webfilter.routes.common import Ctx, Peer, User
from deployments.webfilter.schemas import ChangePasswordBody, Flat, LoginBody, LogoutBody, RefreshBody, Tokens
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE
from rayfleet.state import call

router = APIRouter(tags=["auth"])


@router.post(
    "/api/auth/login",
    response_model=Tokens,
    responses=AUTH_ERRORS,
    summary="Exchange credentials for access and refresh JWTs",
)
async def login(body: LoginBody, context: Ctx, ip: Peer) -> dict[str, Any]:
    await auth.check_password(context, ip, body.username, body.password)
    await context.db(context.store.audit, body.username, ip, "login")
    return {"status": "success", **auth.issue_pair(context, body.username)}


@router.post(
    "/api/auth/refresh", response_model=Tokens, responses=AUTH_ERRORS, summary="Rotate a refresh token (single use)"
)
async def refresh(body: RefreshBody, context: Ctx, ip: Peer) -> dict[str, Any]:
    await auth.refuse_if_locked(context, ip)
    claims = await auth.decode_token(context, ip, body.refresh_token, "refresh")
    if not await call(context.auth, AuthState.revoke, claims["jti"], float(claims["exp"])):
        raise ApiError(401, "refresh token already used")
    return {"status": "success", **auth.issue_pair(context, claims["sub"])}


@router.post("/api/logout", response_model=Flat, responses=AUTH_ERRORS, summary="Revoke the JWT used for this request")
async def logout(context: Ctx, ip: Peer, user: User, body: LogoutBody | None = None) -> dict[str, Any]:
    revoked = []
    if user.claims:
        await call(context.auth, AuthState.revoke, user.claims["jti"], float(user.claims["exp"]))
        revoked.append("access")
    if body and body.refresh_token:
        try:
            claims = await auth.decode_token(context, ip, body.refresh_token, "refresh")
        except ApiError:
            claims = None
        if claims and claims["sub"] == user.username:
            await call(context.auth, AuthState.revoke, claims["jti"], float(claims["exp"]))
            revoked.append("refresh")
    await context.db(context.store.audit, user.username, ip, "logout")
    return {"status": "success", "message": "logged out", "revoked": revoked}


@router.post(
    "/api/change-password",
    response_model=Flat,
    responses=errors(400, 401, 429),
    summary="Change the password (strength policy)",
)
async def change_password(body: ChangePasswordBody, context: Ctx, ip: Peer, user: User) -> dict[str, Any]:
    await auth.check_password(context, ip, user.username, body.current_password)
    problem = auth.password_problem(body.new_password, user.username)
    if problem is None and body.new_password == body.current_password:
        problem = "the new password must differ from the current one"
    if problem:
        raise ApiError(400, problem)
    await context.db(context.store.set_password, user.username, body.new_password)
    await context.db(context.store.audit, user.username, ip, "change_password")
    return {"status": "success", "message": "password changed; tokens issued before now are no longer valid"}


@router.get(
    "/api/ws-token", response_model=Flat, responses=AUTH_ERRORS, summary="Single-use token for /api/ws/logs (2 minutes)"
)
async def ws_token(context: Ctx, user: User) -> dict[str, Any]:
    issued = await call(context.auth, AuthState.issue_ws_token)
    return {"status": "success", **issued}


async def _health(context: Ctx) -> dict[str, Any]:
    proxy = await call(context.proxy, ProxyOwner.status)
    context.children.update(proxy["children"])
    dot = proxy["dns_dot"]  # the DNS-over-TLS forwarder, when the upstreams are tls:// (its upstreams: /api/status)
    healthy = (
        proxy["running"]
        and proxy["dns_running"]
        and all(view["running"] for view in proxy["dns_views"])
        and (dot is None or dot["running"])
    )
    return {
        "status": "healthy" if healthy else "degraded",
        "version": context.config.version,
        "proxy": {"running": proxy["running"], "address": proxy["proxy"]},
        "dns": {
            "running": proxy["dns_running"],
            "address": f"{proxy['dns']}:53" if proxy["dns"] else None,
            "dot_forwarder_running": None if dot is None else dot["running"],
        },
        "data_plane": [proxy["proxy"]] if proxy["running"] else [],
        "children": proxy["children"],
        "dns_views": proxy["dns_views"],
        "nft_table": proxy["nft_table"],
    }


@router.get("/metrics", summary="Supervised children: restarts, up, last exit (Prometheus text)", **METRICS_ROUTE)
async def metrics(context: Ctx, user: User) -> Response:
    proxy = await call(context.proxy, ProxyOwner.status)
    context.children.update(proxy["children"])
    return Response(await context.metrics.render(), media_type=CONTENT_TYPE)


router.add_api_route("/health", _health, methods=["GET"], response_model=Flat, summary="Liveness (no auth)")
router.add_api_route("/api/health", _health, methods=["GET"], response_model=Flat, summary="Liveness (no auth)")
