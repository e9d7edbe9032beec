"""A fast origin for tests and the bench: HAProxy answering every request with a static 200."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from actors.mitigation.node import free_port
from tests.polling import eventually_sync

CONFIG = """global
  maxconn 8000
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
frontend origin
  bind 127.0.0.1:{port} backlog 4096
  http-request return status 200 content-type text/plain string "hello from the origin"
"""


@contextlib.contextmanager
def static_origin() -> Iterator[str]:
    """Yield `127.0.0.1:<port>` of a running HAProxy origin; stop it afterwards."""
    with static_origin_process() as (address, _):
        yield address


@contextlib.contextmanager
def static_origin_process() -> Iterator[tuple[str, int]]:
    """Yield (`127.0.0.1:<port>`, pid) of a running HAProxy origin; stop it afterwards."""
    root = Path(tempfile.mkdtemp(prefix="rf-origin-"))
    port = free_port()
    (root / "origin.cfg").write_text(CONFIG.format(port=port))
    proc = subprocess.Popen(
        ["haproxy", "-db", "-f", str(root / "origin.cfg")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        import socket

        def listening() -> bool:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True

        eventually_sync(listening, ignore=(OSError,), what="the HAProxy origin listening")
        yield f"127.0.0.1:{port}", proc.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
        shutil.rmtree(root, ignore_errors=True)
