"""Fixtures for the container API tests (helpers live in simenv.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.deployments.lxc.simenv import SimEnv, make_client
from tests.sims.pve.simenv import own_sim


@pytest.fixture(scope="session")
def sim_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimEnv]:
    env = SimEnv(tmp_path_factory.mktemp("pve-sim"))
    yield env
    env.stop()


@pytest.fixture
def fresh_sim(tmp_path: Path) -> Iterator[SimEnv]:
    """A simulator of its own (tests that count commands or need a clean model)."""
    yield from own_sim(SimEnv, tmp_path)


async def _client(env: SimEnv, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    from rayfleet.state import local_state

    with local_state():
        client, app = make_client(env.config(tmp_path))
        async with client:
            yield client
        await app.state.component.service.pool.close()


@pytest.fixture
async def api(sim_env: SimEnv, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for client in _client(sim_env, tmp_path):
        yield client


@pytest.fixture
async def fresh_api(fresh_sim: SimEnv, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for client in _client(fresh_sim, tmp_path):
        yield client
