"""An autouse fixture: every mitigation test using it keeps its durable state (rules, bans, policy) in its own SQLite file."""

from __future__ import annotations

import pytest

from rayfleet.durable import DSN_ENV


@pytest.fixture(autouse=True)
def _own_durable_store(tmp_path, monkeypatch):
    monkeypatch.setenv(DSN_ENV, f"sqlite:///{tmp_path}/durable.sqlite3")
