"""Who may use the control plane (``/api/v1/*``, ``/admin/*``, ``/metrics``, the UI's calls).

A request gets in with, in this order:

1. an admin key (``Authorization: Bearer <key>`` or ``x-api-key``), as before sessions existed;
2. a session token as ``Authorization: Bearer rfs1.…`` (``POST /auth/token``);
3. the session cookie. A cookie is sent by the browser on its own, so a request that changes
   state (not GET/HEAD/OPTIONS) must also carry ``X-CSRF-Token``, else 403 ``csrf_failed``.

A session must be signed by this gateway's key, unexpired and not revoked (``SessionBoard``),
else 401 ``invalid_session``; its role must allow the method (``identity.role_allows``), else
403 ``insufficient_role``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, ParamSpec

from starlette.requests import Request

from actors.llm_gateway.sessions import SessionBoard
from deployments.llm_gateway.auth import Authenticator
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.identity import Identity, role_allows
from deployments.llm_gateway.sessions import (
    COOKIE,
    CSRF_HEADER,
    PREFIX,
    SAFE_METHODS,
    SESSION_KEY_FILE,
    Session,
    SessionSigner,
)
from rayfleet import state as state_mod
from rayfleet.auth import presented_key
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle

log = get_logger("llm_gateway")
P = ParamSpec("P")


def _invalid_session(why: str) -> GatewayError:
    return GatewayError(401, f"Invalid session: {why}", code="invalid_session", error_class="session")


class ControlAccess:
    def __init__(
        self, auth: Authenticator, signer: SessionSigner, revocations: ActorHandle[SessionBoard], identity: Identity
    ) -> None:
        self.auth = auth
        self.signer = signer
        self.revocations = revocations
        self.identity = identity
        self._key_guard = auth.guard("admin")

    async def _board(
        self, method: Callable[Concatenate[SessionBoard, P], bool], *args: P.args, **kwargs: P.kwargs
    ) -> bool:
        try:
            return bool(await state_mod.call(self.revocations, method, *args, **kwargs))
        except Exception as exc:
            log.warning("session board unreachable", extra={"method": method.__name__, "error": type(exc).__name__})
            raise GatewayError(503, "sessions cannot be checked right now", code="session_store_unavailable") from None

    async def revoke(self, session: Session) -> bool:
        """Sign `session` out on every replica; False if it already was."""
        return await self._board(SessionBoard.revoke, session.sid, session.expires_at)

    async def _live(self, token: str) -> Session:
        session = self.signer.verify(token)
        if session is None:
            raise _invalid_session("forged, malformed or expired")
        if await self._board(SessionBoard.is_revoked, session.sid):
            raise _invalid_session("signed out")
        return session

    async def session(self, request: Request) -> tuple[Session, bool] | None:
        """The request's live session and whether it came from the cookie; None when it presents none."""
        key = presented_key(request, "x-api-key", bearer=True)
        if key is not None:
            return (await self._live(key), False) if key.startswith(PREFIX) else None
        cookie = request.cookies.get(COOKIE)
        return (await self._live(cookie), True) if cookie else None

    def check_csrf(self, request: Request, session: Session) -> None:
        if request.method.upper() in SAFE_METHODS:
            return
        if not self.signer.csrf_ok(session, request.headers.get(CSRF_HEADER)):
            raise GatewayError(403, f"Missing or wrong {CSRF_HEADER} header for a cookie session", code="csrf_failed")

    async def guard(self, request: Request) -> str:
        """The control plane's FastAPI dependency; returns the caller's id (key fingerprint or subject),
        also left on ``request.state.control_subject`` for the audit of the change (``control_audit``)."""
        subject = await self._caller(request)
        request.state.control_subject = subject
        return subject

    async def _caller(self, request: Request) -> str:
        if not self.auth.enabled:
            return await self._key_guard(request)
        found = await self.session(request)
        if found is None:
            return await self._key_guard(request)
        session, from_cookie = found
        if not role_allows(session.role, request.method):
            raise GatewayError(
                403, f"Role {session.role!r} may not {request.method} on the control plane", code="insufficient_role"
            )
        if from_cookie:
            self.check_csrf(request, session)
        return session.subject


def control_access(config: GatewayConfig, auth: Authenticator, revocations: ActorHandle[SessionBoard]) -> ControlAccess:
    """The replica's access check: its session key, the shared ``SessionBoard`` and ``identity.*``."""
    signer = SessionSigner.from_env(config.data_path(SESSION_KEY_FILE))
    return ControlAccess(auth, signer, revocations, Identity(config.identity))
