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


def router() -> APIRouter:
    api = APIRouter(include_in_schema=False)
    folder = resources.files("deployments.llm_gateway").joinpath("ui")
    loaded = {path: (folder.joinpath(name).read_bytes(), media) for path, (name, media) in ASSETS.items()}

    def serve(path: str) -> None:
        body, media = loaded[path]

        async def asset() -> Response:
            return Response(body, media_type=media, headers=HEADERS)

        api.add_api_route(f"/ui/{path}", asset, methods=["GET"], name=f"ui_{path}")

    for path in loaded:
        serve(path)
    return api
