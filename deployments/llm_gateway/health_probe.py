"""Replica side of the health prober: what to probe, handed to the one prober actor.

The actor cannot build provider requests (actors do not import the adapters), so each
replica works out, for every endpoint its router knows (configured and ``verified``
registry entries), the adapter's probe request (the model listing, or for Bedrock a signed
ListAsyncInvokes) with the endpoint's first key. Every ``PUSH_INTERVAL`` seconds the list goes
to the actor; this also restarts the actor's loop after the actor itself restarted, and gives a
Bedrock probe a fresh signature long before the old one expires.
"""

from __future__ import annotations

from typing import Any

from actors.llm_gateway.prober import EndpointProber, ProbeSettings, ProbeTarget
from deployments.llm_gateway.config import HealthCheckConfig
from deployments.llm_gateway.providers import adapter_for
from deployments.llm_gateway.routing import Router
from rayfleet.state import ActorHandle, call

PUSH_INTERVAL = 5.0
COUNTERS = ("running", "rounds", "probes", "failures", "stale")


def probe_targets(router: Router) -> list[ProbeTarget]:
    """One target per endpoint of the router that can be probed, in name order."""
    targets: list[ProbeTarget] = []
    for name, ep in sorted(router.endpoints.items()):
        adapter = adapter_for(ep.provider, ep.api_version, ep.aws_region)
        ring = router.keyrings.get(name)
        probe = adapter.probe_request(ep.base_url, ring.keys[0] if ring is not None and ring.keys else None)
        target: ProbeTarget = {"name": name, "url": probe.url, "headers": {**ep.extra_headers, **probe.headers}}
        if probe.expires_at is not None:
            target["expires_at"] = probe.expires_at
        targets.append(target)
    return targets


class HealthFeed:
    """Pushes this replica's targets and the ``health_check`` settings to the prober actor."""

    interval = PUSH_INTERVAL

    def __init__(self, handle: ActorHandle[EndpointProber], router: Router, settings: HealthCheckConfig) -> None:
        self.handle, self.router, self.settings = handle, router, settings
        self.last_status: dict[str, Any] | None = None  # what the actor answered the last push

    async def push(self) -> None:
        s = self.settings
        settings: ProbeSettings = {"interval": s.interval, "jitter": s.jitter, "timeout": s.timeout}
        self.last_status = await call(self.handle, EndpointProber.configure, probe_targets(self.router), settings)

    def view(self) -> dict[str, Any]:
        """For ``/health``: the settings and the prober's counters as of the last push (names, no URL)."""
        s, status = self.settings, self.last_status or {}
        counters: dict[str, Any] = {k: status[k] for k in COUNTERS if k in status}
        return {
            "enabled": True,
            "interval": s.interval,
            "unhealthy_threshold": s.unhealthy_threshold,
            "healthy_threshold": s.healthy_threshold,
            "targets": len(status.get("targets", [])),
            **counters,
        }
