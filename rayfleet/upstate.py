"""`rayfleet up`'s state file (``<state dir>/rayfleet.json``) and its refresh on request.

`up` records there what it started and, once the fleet is up, Serve's view of it (the placement
snapshot: each application's status, running replicas and nodes), the head's and the front's
supervision. Asking Serve for its status is the costly part (about 16 ms of CPU in `up` and more
in Serve's controller on a quiet machine, 80 ms at a load average of 20), so `up` does not poll it
every few seconds for nobody: it refreshes the snapshot when a reader asks (`fresh`) and otherwise
every ``IDLE_REFRESH_S``. A reader asks by touching ``rayfleet.refresh`` beside the state file; `up`
looks at that file's modification time every 0.2 s (a `stat`), refreshes, and records the time it
answered as ``refreshed_for``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

STATE_NAME = "rayfleet.json"
REQUEST_NAME = "rayfleet.refresh"
IDLE_REFRESH_S = 30.0  # a snapshot nobody asked for: how stale the file may get
REQUEST_POLL_S = 0.2  # how often `up` looks for a request (and for its stop signal)
FRESH_TIMEOUT_S = 10.0


def read(state_dir: Path) -> dict[str, Any] | None:
    """The state file as `up` last wrote it, or None (no `up` has written one, or it is being replaced)."""
    try:
        state: dict[str, Any] = json.loads((state_dir / STATE_NAME).read_text())
    except (OSError, ValueError):
        return None
    return state


def write(state_dir: Path, state: dict[str, Any]) -> None:
    """Replace the state file whole (readers never see half of one)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / STATE_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(path)


def request(state_dir: Path) -> int:
    """Ask `up` for a fresh snapshot; returns the request's time (the file's mtime in ns)."""
    path = state_dir / REQUEST_NAME
    # the time set explicitly, in ns and after any earlier request's: the file system's own clock ticks
    # only every few ms, and a request stamped like the one `up` just answered would go unanswered
    now = max(time.time_ns(), asked(state_dir) + 1)
    path.touch()
    os.utime(path, ns=(now, now))
    return now


def asked(state_dir: Path) -> int:
    """The time of the latest request (0: none yet), for `up`."""
    try:
        return (state_dir / REQUEST_NAME).stat().st_mtime_ns
    except OSError:
        return 0


def fresh(state_dir: Path, timeout: float | None = None) -> dict[str, Any] | None:
    """The state file with a snapshot taken after this call began, when `up` is up; otherwise (starting,
    stopped, or no answer within ``timeout``, default ``FRESH_TIMEOUT_S``) the file as it is."""
    state = read(state_dir)
    if not state or state.get("phase") != "up":
        return state
    token = request(state_dir)
    deadline = time.monotonic() + (FRESH_TIMEOUT_S if timeout is None else timeout)
    pause = 0.01
    while time.monotonic() < deadline:
        state = read(state_dir)
        if state is not None and int(state.get("refreshed_for") or 0) >= token:
            return state
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
    return read(state_dir)
