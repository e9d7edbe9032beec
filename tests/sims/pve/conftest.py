"""Fixtures for the simulator's own tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sims.pve.simenv import SimEnv


@pytest.fixture
def fresh_sim(tmp_path: Path) -> Iterator[SimEnv]:
    """A simulator of its own (tests that count commands or need a clean model)."""
    env = SimEnv(tmp_path / "sim")
    yield env
    env.stop()
    shutil.rmtree(tmp_path / "sim", ignore_errors=True)
