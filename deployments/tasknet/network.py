"""The app side of the network: one named actor per configured node, wired and bootstrapped once.

The first node of the configuration is the bootstrap node: it writes the genesis
(validator set = the configured nodes) and the others pin it as their genesis author. With
`genesis_author` set, the deployment joins another cluster's network instead: nobody writes a
genesis, every node pins that id and gets the genesis through its peer links.
Every step is idempotent, so replicas racing here converge on the same network.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

from actors.tasknet.node_actor import TaskNode
from deployments.tasknet.config import TasknetConfig
from deployments.tasknet.errors import TasknetError
from rayfleet import state as rstate
from rayfleet.state import ActorHandle, call


class _Concurrent:
    """A local stand-in without the mailbox lock: in Ray the node actor runs with
    max_concurrency 1000 (its calls interleave at awaits), and so must its stand-in."""

    def __init__(self, instance: TaskNode) -> None:
        self._instance = instance

    def __getattr__(self, name: str) -> SimpleNamespace:
        method = getattr(self._instance, name)

        async def run(*args: Any, **kwargs: Any) -> Any:
            return await method(*args, **kwargs)

        return SimpleNamespace(remote=lambda *a, **k: asyncio.ensure_future(run(*a, **k)))


def actor_name(node: str) -> str:
    return f"tasknet-node-{node}"


class Network:
    def __init__(self, config: TasknetConfig) -> None:
        self.config = config
        self.handles: dict[str, ActorHandle[TaskNode]] = {}
        self.ids: dict[str, str] = {}
        self._lock = asyncio.Lock()
        self._ready = False

    def handle(self, node: str) -> ActorHandle[TaskNode]:
        if node not in self.handles:
            handle = rstate.actor(
                TaskNode,
                actor_name(node),
                node,
                self.config.node_dir(node),
                self.config.actor_settings(node),
                max_concurrency=1000,
            )
            if rstate.is_local(handle):
                handle = cast(ActorHandle[TaskNode], _Concurrent(cast(rstate.LocalActorHandle, handle).instance))
            self.handles[node] = handle
        return self.handles[node]

    async def ensure(self) -> None:
        if self._ready:
            return
        async with self._lock:
            if self._ready:
                return
            await self._wire()
            self._ready = True

    async def _wire(self) -> None:
        names = self.config.nodes
        handles = {n: self.handle(n) for n in names}
        whoami = await asyncio.gather(*(call(h, TaskNode.whoami) for h in handles.values()))
        self.ids = {n: w["node_id"] for n, w in zip(names, whoami, strict=True)}
        genesis = self.config.genesis_author or self.ids[names[0]]
        names_of = {n: actor_name(n) for n in names}
        peers: dict[str, Any] = dict(handles)
        await asyncio.gather(*(call(h, TaskNode.connect, peers, self.ids, genesis, names_of) for h in handles.values()))
        if self.config.genesis_author is not None:
            return  # the genesis comes over the peer links; each node joins once it has it (anti-entropy step)
        validators = [self.ids[n] for n in self.config.validators or names]
        await call(handles[names[0]], TaskNode.bootstrap, validators)
        for _ in range(100):
            joined = await asyncio.gather(*(call(h, TaskNode.ensure_joined) for h in handles.values()))
            if all(joined):
                break
            await asyncio.sleep(0.1)

    async def node(self, name: str) -> ActorHandle[TaskNode]:
        if name not in self.config.nodes:
            raise TasknetError(404, f"node {name} not found")
        await self.ensure()
        return self.handles[name]

    async def stop(self) -> None:
        for handle in self.handles.values():
            await call(handle, TaskNode.stop)
