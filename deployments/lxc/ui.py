"""The web UI at `/`: one HTML page, one script, one stylesheet, a strict CSP.

The page carries no inline script or style; the only server-side substitution
is the route prefix (HTML-escaped) so the page works at `/` and under Serve's
`/lxc/`.
"""

from __future__ import annotations

import html
from importlib import resources

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, Response

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def _asset(name: str) -> str:
    return resources.files("deployments.lxc").joinpath("static").joinpath(name).read_text(encoding="utf-8")


router = APIRouter(include_in_schema=False)
PAGE = _asset("index.html")
SCRIPT = _asset("app.js")
STYLE = _asset("app.css")


@router.get("/")
async def index(request: Request) -> HTMLResponse:
    prefix = html.escape(request.scope.get("root_path", "").rstrip("/"), quote=True)
    return HTMLResponse(PAGE.replace("{{PREFIX}}", prefix), headers=SECURITY_HEADERS)


@router.get("/static/app.js")
async def app_js() -> Response:
    return Response(SCRIPT, media_type="text/javascript", headers=SECURITY_HEADERS)


@router.get("/static/app.css")
async def app_css() -> Response:
    return Response(STYLE, media_type="text/css", headers=SECURITY_HEADERS)
