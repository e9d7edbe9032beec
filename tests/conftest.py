"""Fixtures shared by every tier.

Tier 2 needs real servers on loopback. A test that needs a server the machine
lacks fails in CI (CI=true) and is skipped, with the reason, elsewhere.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from rayfleet import state
from rayfleet.launcher import free_port  # noqa: F401 - re-exported for tests

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_server(name: str, host: str, port: int) -> None:
    """Fail (CI) or skip (elsewhere) unless something accepts TCP on host:port."""
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return
    except OSError as exc:
        message = f"{name} is not reachable on {host}:{port}: {exc}"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def redis_url() -> str:
    require_server("redis", "127.0.0.1", 6379)
    return os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def postgres_dsn() -> str:
    require_server("postgresql", "127.0.0.1", 5432)
    return os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(autouse=True)
def _isolated_local_state():
    """Every test starts with no in-process actor stand-ins."""
    state.reset_local_state()
    yield
    state.reset_local_state()


def pytest_collection_modifyitems(config, items):
    """Run tier 3 last, so the expensive cluster starts once after the fast tiers."""
    items.sort(key=lambda item: "tests/e2e/" in str(item.fspath).replace(os.sep, "/"))
    for item in items:
        if "tests/e2e/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.e2e)
