"""A component's web UI: `index.html` and the ES modules and stylesheets of its package's `static/`, under a strict CSP.

The page carries no inline script or style; the only server-side substitution
is the route prefix (HTML-escaped), so the page works at `/` and under Serve's
`/<component>/`. The assets are read once, from the installed package (no CDN, no
build step), and served by name: nothing else is reachable. Beside a package's own
files, every page gets the platform's shared modules of `rayfleet/static/` (`dom.js`:
building the DOM with every server value set as text); a package's file of the same
name wins.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from importlib import resources

from fastapi import APIRouter, HTTPException, Request
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
MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css"}
SHARED_PACKAGE = "rayfleet"


def _scripts_and_styles(package: str) -> dict[str, tuple[str, str]]:
    folder = resources.files(package).joinpath("static")
    files: dict[str, tuple[str, str]] = {}
    for item in folder.iterdir():
        suffix = "." + item.name.rpartition(".")[2]
        if item.is_file() and suffix in MEDIA_TYPES:
            files[item.name] = (item.read_text(encoding="utf-8"), MEDIA_TYPES[suffix])
    return files


def assets(package: str) -> tuple[str, dict[str, tuple[str, str]]]:
    """(index.html, {file name: (text, media type)}): the package's scripts and stylesheets over the shared ones."""
    page = resources.files(package).joinpath("static", "index.html").read_text(encoding="utf-8")
    return page, {**_scripts_and_styles(SHARED_PACKAGE), **_scripts_and_styles(package)}


def page_router(package: str, missing: Callable[[], Exception] | None = None) -> APIRouter:
    """`GET /` and `GET /static/{name}` from `<package>/static/` (kept out of the OpenAPI document).
    An unknown name raises `missing()` (default: a 404 `HTTPException`), so it answers in the
    component's error shape."""
    page, files = assets(package)
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    async def index(request: Request) -> HTMLResponse:
        prefix = html.escape(request.scope.get("root_path", "").rstrip("/"), quote=True)
        return HTMLResponse(page.replace("{{PREFIX}}", prefix), headers=SECURITY_HEADERS)

    @router.get("/static/{name}")
    async def asset(name: str) -> Response:
        """A file by its name (looked up, never opened from the request's path)."""
        if name not in files:
            raise missing() if missing is not None else HTTPException(404, "no such file")
        text, media_type = files[name]
        return Response(text, media_type=media_type, headers=SECURITY_HEADERS)

    return router
