"""The task network's HTTP surface: one FastAPI app per node, mounted at `/<node>`, and the
bootstrap node's API at the root as well (so `{base_url}` is `/tasknet` or `/tasknet/<node>`)."""

from __future__ import annotations

from fastapi import FastAPI

from deployments.tasknet import errors
from deployments.tasknet.config import TasknetConfig
from deployments.tasknet.routes import ROUTERS
from deployments.tasknet.state import TasknetState
from rayfleet.appstate import attach
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_body_cap, install_error_handlers

DESCRIPTION = """Decentralized task network node API (spec 002 §E).

Every node of the demo network has its own base URL: `/tasknet/<node>` through Serve
(`/tasknet` itself is the bootstrap node). Reads are public; acting as a node requires its
token in `X-Node-Token` (or `Authorization: Bearer`). Errors are `{detail}`."""


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
    install_body_cap(app, state.config.max_body_bytes)
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
