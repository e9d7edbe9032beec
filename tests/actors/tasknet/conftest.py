"""Fixtures of the task network's tier-1 tests."""

from __future__ import annotations

import pytest

from tests.actors.tasknet.netsim import ManualClock


@pytest.fixture()
def clock() -> ManualClock:
    """One wall clock for every node of a test network, moved by the test."""
    return ManualClock()
