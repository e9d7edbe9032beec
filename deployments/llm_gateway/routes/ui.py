"""The registry UI (``GET /ui/registry``): one page, one script, one stylesheet, a strict CSP.

The page is a static shell with no data in it and relative links, so it works at ``/`` on the
direct listener and under Serve's ``/llm``. Its script asks ``auth/session``: without an admin
session it shows the sign-in form (an admin key, or a configured OIDC provider); with one it
lists ``api/v1/registry`` and calls the real control-plane routes, with ``X-CSRF-Token``.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from starlette.responses import Response

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
ASSETS = {
    "registry": ("registry.html", "text/html; charset=utf-8"),
    "registry.js": ("registry.js", "text/javascript; charset=utf-8"),
    "registry.css": ("registry.css", "text/css; charset=utf-8"),
}


_FOLDER = resources.files("deployments.llm_gateway").joinpath("ui")
LOADED = {path: (_FOLDER.joinpath(name).read_bytes(), media) for path, (name, media) in ASSETS.items()}

router = APIRouter(include_in_schema=False)


def _asset(path: str) -> Response:
    body, media = LOADED[path]
    return Response(body, media_type=media, headers=HEADERS)


@router.get("/ui/registry", name="ui_registry")
async def registry_page() -> Response:
    return _asset("registry")


@router.get("/ui/registry.js", name="ui_registry.js")
async def registry_script() -> Response:
    return _asset("registry.js")


@router.get("/ui/registry.css", name="ui_registry.css")
async def registry_style() -> Response:
    return _asset("registry.css")
