"""`rayfleet up`'s state file refreshed on request (`rayfleet.upstate`), against `up`'s own watch loop
with Serve's status replaced by a counter (tier 1)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rayfleet import cli, placement, upstate
from tests.polling import eventually_sync


class Serve:
    """Serve's status as `up` reads it: each look numbered."""

    def __init__(self) -> None:
        self.looks = 0

    def __call__(self, apps: list[str]) -> dict[str, Any]:
        self.looks += 1
        return {app: {"status": "RUNNING", "replicas": self.looks, "nodes": [], "node_ids": []} for app in apps}


class Requests:
    """`upstate.asked`, counting how often `up` looked for a request."""

    def __init__(self) -> None:
        self.looks = 0
        self.real = upstate.asked

    def __call__(self, state_dir: Path) -> int:
        self.looks += 1
        return self.real(state_dir)


@pytest.fixture
def up(tmp_path, monkeypatch) -> Iterator[tuple[Path, Serve, Requests]]:
    """`up`'s watch loop on a state folder of its own, in a thread, with the fleet up."""
    monkeypatch.setenv("RAYFLEET_STATE_DIR", str(tmp_path))
    serve, requests = Serve(), Requests()
    monkeypatch.setattr(placement, "snapshot", serve)
    monkeypatch.setattr(upstate, "asked", requests)
    monkeypatch.setattr(upstate, "REQUEST_POLL_S", 0.01)
    state: dict[str, Any] = {"pid": 1, "phase": "up", "apps": ["asn"]}
    upstate.write(tmp_path, state)
    stop = cli._StopFlag()
    watch = threading.Thread(target=cli._watch, args=(state, stop), daemon=True)
    watch.start()
    yield tmp_path, serve, requests
    stop.set = True
    watch.join(10)


def test_a_reader_gets_a_snapshot_taken_after_it_asked(up):
    folder, serve, _ = up
    eventually_sync(lambda: serve.looks == 1, what="the first snapshot, taken when the watch starts")
    for expected in (2, 3):
        state = upstate.fresh(folder)
        assert state is not None and state["serve"]["asn"]["replicas"] == expected, state
        assert state["refreshed_for"] == (folder / upstate.REQUEST_NAME).stat().st_mtime_ns


def test_an_idle_fleet_is_not_asked_for_its_status_again(up):
    """Nobody asks: `up` looks for a request many times and takes no second snapshot (it would every
    `IDLE_REFRESH_S`, 30 s)."""
    folder, serve, requests = up
    eventually_sync(lambda: serve.looks == 1, what="the first snapshot")
    seen = requests.looks
    eventually_sync(lambda: requests.looks >= seen + 20, what="twenty looks for a request")
    assert serve.looks == 1
    assert upstate.read(folder)["serve"]["asn"]["replicas"] == 1


def test_a_reader_of_a_fleet_that_is_not_up_reads_the_file_without_asking(tmp_path):
    upstate.write(tmp_path, {"pid": 1, "phase": "starting", "apps": ["asn"]})
    assert upstate.fresh(tmp_path) == {"pid": 1, "phase": "starting", "apps": ["asn"]}
    assert not (tmp_path / upstate.REQUEST_NAME).exists()
    assert upstate.fresh(tmp_path / "nothing here") is None


def test_an_up_that_does_not_answer_leaves_the_file_as_it_is(tmp_path):
    upstate.write(tmp_path, {"pid": 1, "phase": "up", "serve": {"asn": {"replicas": 2}}, "refreshed_for": 5})
    state = upstate.fresh(tmp_path, timeout=0.05)
    assert state == {"pid": 1, "phase": "up", "serve": {"asn": {"replicas": 2}}, "refreshed_for": 5}
    assert (tmp_path / upstate.REQUEST_NAME).stat().st_mtime_ns > 5  # it asked
