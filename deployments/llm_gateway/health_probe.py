"""Replica side of the health prober: what to probe, handed to the one prober actor.

The actor cannot build provider requests (actors do not import the adapters), so each
replica works out, for every endpoint its router knows (configured and ``verified``
registry entries), the model-listing URL and the headers its adapter sends with the
endpoint's first key. Every ``PUSH_INTERVAL`` seconds the list goes to the actor; this
also restarts the actor's loop after the actor itself restarted.

Bedrock endpoints are not probed: their requests are signed per call (SigV4) and the
runtime has no model listing; their breakers are fed by traffic alone.
"""

from __future__ import annotations

from actors.llm_gateway.prober import EndpointProber, ProbeSettings, ProbeTarget
from deployments.llm_gateway.config import HealthCheckConfig
from deployments.llm_gateway.providers import adapter_for
from deployments.llm_gateway.routing import Router
from rayfleet.state import ActorHandle, call

PUSH_INTERVAL = 5.0
NOT_PROBED = frozenset({"bedrock"})


def probe_targets(router: Router) -> list[ProbeTarget]:
    """One target per endpoint of the router that can be probed, in name order."""
    targets: list[ProbeTarget] = []
    for name, ep in sorted(router.endpoints.items()):
        if ep.provider in NOT_PROBED:
            continue
        adapter = adapter_for(ep.provider, ep.api_version, ep.aws_region)
        ring = router.keyrings.get(name)
        key = ring.keys[0] if ring is not None and ring.keys else None
        headers = {**ep.extra_headers, **adapter.auth_headers(key)}
        targets.append({"name": name, "url": adapter.models_url(ep.base_url), "headers": headers})
    return targets


class HealthFeed:
    """Pushes this replica's targets and the ``health_check`` settings to the prober actor."""

    interval = PUSH_INTERVAL

    def __init__(self, handle: ActorHandle[EndpointProber], router: Router, settings: HealthCheckConfig) -> None:
        self.handle, self.router, self.settings = handle, router, settings

    async def push(self) -> None:
        s = self.settings
        settings: ProbeSettings = {"interval": s.interval, "jitter": s.jitter, "timeout": s.timeout}
        await call(self.handle, EndpointProber.configure, probe_targets(self.router), settings)
