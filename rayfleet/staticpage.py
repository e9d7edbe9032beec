"""A component's one-page UI: `index.html`, `app.js` and `app.css` from its package's `static/`, under a strict CSP.

The page carries no inline script or style; the only server-side substitution
is the route prefix (HTML-escaped), so the page works at `/` and under Serve's
`/<component>/`. The assets are read once, from the installed package (no CDN).
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


def page_router(package: str) -> APIRouter:
    """`GET /`, `/static/app.js`, `/static/app.css` from `<package>/static/` (kept out of the OpenAPI document)."""
    static = resources.files(package).joinpath("static")
    page, script, style = (
        static.joinpath(name).read_text(encoding="utf-8") for name in ("index.html", "app.js", "app.css")
    )
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    async def index(request: Request) -> HTMLResponse:
        prefix = html.escape(request.scope.get("root_path", "").rstrip("/"), quote=True)
        return HTMLResponse(page.replace("{{PREFIX}}", prefix), headers=SECURITY_HEADERS)

    @router.get("/static/app.js")
    async def app_js() -> Response:
        return Response(script, media_type="text/javascript", headers=SECURITY_HEADERS)

    @router.get("/static/app.css")
    async def app_css() -> Response:
        return Response(style, media_type="text/css", headers=SECURITY_HEADERS)

    return router
