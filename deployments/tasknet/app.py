"""The task network's HTTP surface: one FastAPI app per node, mounted at `/<node>`, and the
bootstrap node's API at the root as well (so `{base_url}` is `/tasknet` or `/tasknet/<node>`)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from starlette.responses import JSONResponse

from deployments.tasknet import errors
from deployments.tasknet.api import make_guard, node_tokens
from deployments.tasknet.config import TasknetConfig
from deployments.tasknet.network import Network
from deployments.tasknet.routes_agent import router as agent_router
from deployments.tasknet.routes_governance import router as governance_router
from deployments.tasknet.routes_network import router as network_router
from deployments.tasknet.routes_tasks import router as tasks_router
from rayfleet.docs import use_local_docs_assets

DESCRIPTION = """Decentralized task network node API (spec 002 §E).

Every node of the demo network has its own base URL: `/tasknet/<node>` through Serve
(`/tasknet` itself is the bootstrap node). Reads are public; acting as a node requires its
token in `X-Node-Token` (or `Authorization: Bearer`). Errors are `{detail}`."""


def create_node_app(config: TasknetConfig, network: Network, node: str) -> FastAPI:
    app = FastAPI(title=f"tasknet node {node}", version="1", description=DESCRIPTION)
    app.state.network = network
    app.state.node_name = node
    app.state.config = config
    app.state.public_reads = config.public_reads
    app.state.ws_poll_s = config.ws_poll_s
    app.state.guard = make_guard(node, config.token_env)
    app.state.token = lambda: node_tokens(config.token_env).get(node, "")
    errors.install(app)

    @app.middleware("http")
    async def cap_body(request: Request, call_next: Any) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > config.max_body_bytes):
            return JSONResponse({"detail": f"request body larger than {config.max_body_bytes} bytes"}, status_code=400)
        return await call_next(request)

    for router in (network_router, tasks_router, governance_router, agent_router):
        app.include_router(router)
    use_local_docs_assets(app)
    return app


def create_app(config: TasknetConfig, state: Any = None) -> FastAPI:
    """`state` is unused: the nodes are named Ray actors (in-process stand-ins without Ray)."""
    network = Network(config)
    app = create_node_app(config, network, config.default_node)
    for node in config.nodes:
        app.mount(f"/{node}", create_node_app(config, network, node))
    app.state.nodes = list(config.nodes)
    return app
