"""What the routes of one node's app share: the configuration, the network client, the node it acts as."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from actors.tasknet.node_actor import TaskNode
from deployments.tasknet.config import TasknetConfig
from deployments.tasknet.errors import auth_failure
from deployments.tasknet.network import Network
from rayfleet.auth import api_key_guard
from rayfleet.state import ActorHandle

TOKEN_HEADER = "X-Node-Token"

Guard = Callable[..., Awaitable[object]]
"""`await guard(request)`: the node token check (rayfleet.auth), raising TasknetError 401/403."""


def node_tokens(env_name: str) -> dict[str, str]:
    """`n1:<token>,n2:<token>` from the environment; a node without a token accepts no writes."""
    out: dict[str, str] = {}
    for item in os.environ.get(env_name, "").split(","):
        name, _, token = item.strip().partition(":")
        if name and len(token) >= 16:
            out[name] = token
    return out


def make_guard(node: str, env_name: str) -> Guard:
    guard: Guard = api_key_guard(
        lambda: [t for t in (node_tokens(env_name).get(node),) if t],
        on_failure=auth_failure,
        component="tasknet",
        header=TOKEN_HEADER,
        bearer=True,
        missing_message="missing node token (X-Node-Token or Authorization: Bearer)",
        wrong_message="invalid node token",
    )
    return guard


@dataclass
class TasknetState:
    """One per node app: every app of a deployment shares the `network`, each acts as its own `node`."""

    config: TasknetConfig
    network: Network
    node: str
    guard: Guard = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.guard = make_guard(self.node, self.config.token_env)

    @classmethod
    def from_ray(cls, config: TasknetConfig) -> TasknetState:
        """The bootstrap node's state over the named node actors (in-process stand-ins without Ray)."""
        return cls(config, Network(config), config.default_node)

    def for_node(self, node: str) -> TasknetState:
        """The same network, acting as `node` (the app mounted at `/<node>`)."""
        return replace(self, node=node)

    def token(self) -> str:
        return node_tokens(self.config.token_env).get(self.node, "")

    async def handle(self) -> ActorHandle[TaskNode]:
        return await self.network.node(self.node)
