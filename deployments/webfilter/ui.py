"""The admin UI at `/` (under Serve: `/webfilter/`): one HTML page and the ES modules and stylesheet of
`static/`, read from the package at import (no CDN, no build step), each answered with a strict CSP.

The page carries no inline script or style. The only server-side substitution is the route prefix
(HTML-escaped), so the page works at `/` and under Serve's `/webfilter/`. The UI calls the same API
routes as any client, with the bearer token `POST /api/auth/login` gives.
"""

from __future__ import annotations

import html
from importlib import resources

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, Response

from deployments.webfilter.errors import ApiError

# connect-src 'self' covers fetch() and the same-origin ws:// / wss:// of the live log
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css"}


def _assets() -> tuple[str, dict[str, tuple[str, str]]]:
    """(index.html, {file name: (text, media type)}) of every script and stylesheet in `static/`."""
    folder = resources.files("deployments.webfilter").joinpath("static")
    files: dict[str, tuple[str, str]] = {}
    for item in folder.iterdir():
        suffix = "." + item.name.rpartition(".")[2]
        if item.is_file() and suffix in MEDIA_TYPES:
            files[item.name] = (item.read_text(encoding="utf-8"), MEDIA_TYPES[suffix])
    return folder.joinpath("index.html").read_text(encoding="utf-8"), files


PAGE, ASSETS = _assets()
router = APIRouter(include_in_schema=False)


@router.get("/")
async def index(request: Request) -> HTMLResponse:
    prefix = html.escape(request.scope.get("root_path", "").rstrip("/"), quote=True)
    return HTMLResponse(PAGE.replace("{{PREFIX}}", prefix), headers=HEADERS)


@router.get("/static/{name}")
async def asset(name: str) -> Response:
    """A file of `static/` by its name (nothing else is reachable: the name is looked up, not opened)."""
    if name not in ASSETS:
        raise ApiError(404, "no such file")
    text, media_type = ASSETS[name]
    return Response(text, media_type=media_type, headers=HEADERS)
