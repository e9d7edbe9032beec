"""Fixtures: the autoscale API against a real pve-sim over real SSH on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deployments.autoscale.app import create_app
from deployments.autoscale.config import AutoscaleConfig
from deployments.autoscale.state import AutoscaleState
from rayfleet.state import local_state
from sims.pve.scenario import day_scenario, install
from tests.sims.pve.simenv import SimEnv

API_KEY = "autoscale-test-key-0123456789abcdef"


@pytest.fixture(scope="session")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimEnv]:
    env = SimEnv(tmp_path_factory.mktemp("autoscale-sim"))
    install(env.model, day_scenario(7)["pve1"])
    yield env
    env.stop()


def make_config(sim: SimEnv, **overrides: Any) -> AutoscaleConfig:
    data: dict[str, Any] = {
        "hosts": {"pve1": {**sim.zone(), "cores": 24, "memory_mb": 24576}},
        "monitor": {"enabled": False, "duckdb_path": None},
        "scaler": {"enabled": False},
        "health_cache_seconds": 0,
        **overrides,
    }
    return AutoscaleConfig.model_validate(data)


async def open_client(
    config: AutoscaleConfig, client_ip: str = "127.0.0.1", key: str | None = API_KEY
) -> AsyncIterator[httpx.AsyncClient]:
    with local_state():
        app = create_app(config, AutoscaleState.from_ray(config, background=False))
        transport = httpx.ASGITransport(app=app, client=(client_ip, 4321))
        headers = {"X-API-Key": key} if key else {}
        async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as client:
            yield client


@pytest.fixture
async def client(sim: SimEnv, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    async for c in open_client(make_config(sim)):
        yield c


@pytest.fixture
def config_factory(sim: SimEnv, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    return lambda **kw: make_config(sim, **kw)


@pytest.fixture
def tmp_root(tmp_path: Path) -> Path:
    return tmp_path
