"""The console's ASGI app."""

from __future__ import annotations

from fastapi import FastAPI

from rayfleet.appstate import attach
from rayfleet.console.routes import router
from rayfleet.console.state import ConsoleState
from rayfleet.status import Fleet


def create_app(fleet: Fleet, state: ConsoleState | None = None) -> FastAPI:
    """The console over ``fleet``; its placement comes from Ray unless ``state`` says otherwise."""
    state = state or ConsoleState.from_ray(fleet)
    app = FastAPI(title="rayfleet console", docs_url=None, redoc_url=None, openapi_url=None)
    attach(app, state)
    app.include_router(router)
    return app
