"""The node API's routers, one module per resource, included in this order by `create_node_app`."""

from __future__ import annotations

from fastapi import APIRouter

from . import agent, feed, governance, network, peers, tasks

ROUTERS: tuple[APIRouter, ...] = (
    network.router,
    feed.router,
    tasks.router,
    governance.router,
    agent.router,
    peers.router,
)
