"""Fixtures of the mitigation tests: a fast HAProxy origin and the app over a local fleet.

Every node here is a real HAProxy process on a free loopback port; the fleet and its
node actors are in-process stand-ins (no Ray), stopped with the test.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from actors.mitigation.fleet import MitigationFleet
from actors.mitigation.settings import AutoscaleSettings, FleetSettings, NodeSettings, WebhookSettings
from deployments.mitigation.app import create_app
from deployments.mitigation.config import MitigationConfig
from deployments.mitigation.state import MitigationState
from rayfleet.state import LocalActorHandle
from tests.actors.mitigation.durable_store import _own_durable_store  # noqa: F401 - autouse: a store per test
from tests.actors.mitigation.origin import static_origin

_FLEETS = itertools.count(1)
API_KEY = "9b2e4c6a8d0f1e3a5c7b9d1f3e5a7c9b0d2f4e6a8c1b3d5f"  # test-only, 48 hex like the generated one
HEADERS = {"X-Service-API-Key": API_KEY}


@pytest.fixture(scope="session")
def origin() -> Iterator[str]:
    with static_origin() as address:
        yield address


def fleet_settings(origin: str, **node: Any) -> FleetSettings:
    webhooks = node.pop("webhooks", None)
    asn = node.pop("asn_api_url", "")
    initial = node.pop("initial_nodes", 1)
    replace = node.pop("replace_dead_nodes", True)
    fleet_flood = node.pop("fleet_flood_rps", None)
    autoscale = node.pop("autoscale", None)
    return FleetSettings(
        autoscale=autoscale or AutoscaleSettings(),
        initial_nodes=initial,
        replace_dead_nodes=replace,
        fleet_flood_rps=fleet_flood,
        heartbeat_interval_s=0.3,
        node=NodeSettings(origin=origin, **node),
        webhooks=webhooks or WebhookSettings(),
        asn_api_url=asn,
        asn_api_key="asn-test-key-0123456789abcdef0123456789" if asn else "",
    )


class Fleet:
    """The app, its HTTP client and the fleet behind it."""

    def __init__(self, settings: FleetSettings) -> None:
        self.fleet = MitigationFleet(settings, name=f"fleet-{next(_FLEETS)}")
        self.handle = LocalActorHandle(self.fleet)
        config = MitigationConfig(fleet=settings, api_key=SecretStr(API_KEY))
        self.app = create_app(config, MitigationState(config, self.handle))
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://mitigation", headers=HEADERS
        )

    def node(self, node_id: str = "node-1") -> Any:
        return self.fleet.nodes[node_id].handle.instance

    def node_url(self, node_id: str = "node-1") -> str:
        return f"http://{self.node(node_id).address}"

    async def close(self) -> None:
        await self.client.aclose()
        await self.fleet.shutdown()


@pytest.fixture
async def make_fleet(origin: str) -> AsyncIterator[Any]:
    made: list[Fleet] = []

    async def make(**node: Any) -> Fleet:
        fleet = Fleet(fleet_settings(origin, **node))
        made.append(fleet)
        await fleet.handle.ensure_started.remote()
        return fleet

    yield make
    for fleet in made:
        await fleet.close()


@pytest.fixture
async def fleet(make_fleet: Any) -> Fleet:
    return await make_fleet()


@pytest.fixture
async def data_plane() -> AsyncIterator[httpx.AsyncClient]:
    """A client for the proxied traffic: a new connection per request, so every request is a fresh source hit."""
    async with httpx.AsyncClient(trust_env=False, timeout=5.0, limits=httpx.Limits(max_keepalive_connections=0)) as c:
        yield c
