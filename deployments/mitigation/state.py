"""What the mitigation routes share: the config, the fleet actor and the fleet's metrics."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from actors.mitigation.fleet import MitigationFleet
from actors.mitigation.node_metrics import FLEET_COMPONENT
from deployments.mitigation.config import MitigationConfig
from deployments.mitigation.errors import unwrap
from rayfleet import state as rf_state
from rayfleet.metrics import Metrics
from rayfleet.state import ActorHandle, call


@dataclass
class MitigationState:
    config: MitigationConfig
    fleet: ActorHandle[MitigationFleet]
    metrics: Metrics = field(default_factory=lambda: Metrics(FLEET_COMPONENT))
    started: bool = False

    @classmethod
    def from_ray(cls, config: MitigationConfig) -> MitigationState:
        """The named fleet actor (an in-process stand-in without Ray)."""
        fleet = rf_state.actor(MitigationFleet, config.fleet_actor, config.fleet, config.fleet_actor)
        return cls(config=config, fleet=fleet)

    async def ready(self) -> ActorHandle[MitigationFleet]:
        """The fleet handle, once the fleet has started its nodes. Asked on every call, not once per
        replica: a fleet actor that Ray restarted brings its kept nodes back on the first call that
        reaches it (the chaos run found node-1 gone for good after a fleet restart)."""
        await call(self.fleet, MitigationFleet.ensure_started)
        self.started = True
        return self.fleet

    async def fleet_call(self, method: Callable[..., Awaitable[dict[str, Any]]], *args: Any) -> Any:
        """A fleet method's value (its error envelope becomes an ApiError)."""
        return unwrap(await call(await self.ready(), method, *args))

    async def node(self, node_id: str, method: str, *args: Any) -> Any:
        """A node method's value through the fleet (whose envelope becomes an ApiError on refusal)."""
        fleet = await self.ready()
        return unwrap(await call(fleet, MitigationFleet.call_node, node_id, method, *args))
