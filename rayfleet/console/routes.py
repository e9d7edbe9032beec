"""The console's routes: the page and its assets, the report as JSON, liveness."""

from __future__ import annotations

from importlib import resources
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from starlette.responses import Response

from rayfleet.appstate import state_of
from rayfleet.console.state import ConsoleState
from rayfleet.status import FleetReport

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
MEDIA = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}
_FOLDER = resources.files("rayfleet.console").joinpath("static")
# name → (body, media type), read once at import: the package ships them (package-data)
ASSETS = {
    name: (_FOLDER.joinpath(name).read_bytes(), MEDIA[name.rsplit(".", 1)[1]])
    for name in ("index.html", "console.js", "console.css")
}

Console = Annotated[ConsoleState, Depends(state_of(ConsoleState))]

router = APIRouter()


def _asset(name: str) -> Response:
    body, media = ASSETS[name]
    return Response(body, media_type=media, headers=HEADERS)


@router.get("/", include_in_schema=False)
async def page() -> Response:
    return _asset("index.html")


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> Response:
    return Response(status_code=204, headers=HEADERS)


@router.get("/static/{name}", include_in_schema=False)
async def asset(name: str) -> Response:
    if name == "index.html" or name not in ASSETS:
        raise HTTPException(404)
    return _asset(name)


@router.get("/api/status", response_model=FleetReport, summary="Every component's health, placement and URLs")
async def status(console: Console, response: Response) -> FleetReport:
    response.headers["Cache-Control"] = "no-store"
    return await console.report()


@router.get("/api/health", summary="Liveness")
async def health() -> dict[str, str]:
    return {"status": "ok"}
