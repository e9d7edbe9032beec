"""The task network's HTTP surface: one FastAPI app per node, mounted at `/<node>`, and the
bootstrap node's API at the root as well (so `{base_url}` is `/tasknet` or `/tasknet/<node>`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response

from deployments.tasknet import errors
from deployments.tasknet.config import TasknetConfig
from deployments.tasknet.routes import ROUTERS
from deployments.tasknet.state import TasknetState
from rayfleet.appstate import attach
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers

DESCRIPTION = """Decentralized task network node API (spec 002 §E).

Every node of the demo network has its own base URL: `/tasknet/<node>` through Serve
(`/tasknet` itself is the bootstrap node). Reads are public; acting as a node requires its
token in `X-Node-Token` (or `Authorization: Bearer`). Errors are `{detail}`."""

Next = Callable[[Request], Awaitable[Response]]


def body_cap(limit: int) -> Callable[[Request, Next], Awaitable[Response]]:
    """400 for a request whose declared body is larger than `limit` bytes (or whose length is not a number)."""

    async def cap_body(request: Request, call_next: Next) -> Response:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return JSONResponse({"detail": f"request body larger than {limit} bytes"}, status_code=400)
        return await call_next(request)

    return cap_body


def create_node_app(state: TasknetState) -> FastAPI:
    """The API of the node `state.node`."""
    app = FastAPI(title=f"tasknet node {state.node}", version="1", description=DESCRIPTION)
    attach(app, state)
    install_error_handlers(
        app,
        errors.render,
        component="tasknet",
        handlers=errors.HANDLERS,
        validation=errors.validation_error,
        http=errors.http_error,
    )
    app.middleware("http")(body_cap(state.config.max_body_bytes))
    for router in ROUTERS:
        app.include_router(router)
    use_local_docs_assets(app)
    return app


def create_app(config: TasknetConfig, state: TasknetState | None = None) -> FastAPI:
    """The bootstrap node's API at the root, each configured node's at `/<node>` (one shared network)."""
    state = state or TasknetState.from_ray(config)
    app = create_node_app(state)
    for node in config.nodes:
        app.mount(f"/{node}", create_node_app(state.for_node(node)))
    return app
