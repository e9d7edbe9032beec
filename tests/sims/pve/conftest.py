"""Fixtures for the simulator's own tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sims.pve.simenv import SimEnv, own_sim


@pytest.fixture
def fresh_sim(tmp_path: Path) -> Iterator[SimEnv]:
    """A simulator of its own (tests that count commands or need a clean model)."""
    yield from own_sim(SimEnv, tmp_path)
