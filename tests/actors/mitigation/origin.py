"""A fast origin for tests and the bench: HAProxy answering every request with a static 200."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from actors.mitigation.node import free_port
from tests.polling import eventually_sync

# global and defaults of the one-process HAProxies the tests and benches start
HEADER = """global
  maxconn 8000
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
"""
CONFIG = (
    HEADER
    + """frontend origin
  bind 127.0.0.1:{port} backlog 4096{options}
  http-request return status 200 content-type text/plain string "hello from the origin"
"""
)


@contextlib.contextmanager
def static_origin(options: str = "") -> Iterator[str]:
    """Yield `127.0.0.1:<port>` of a running HAProxy origin; stop it afterwards. `options` go on its
    `bind` line (e.g. `ssl crt <pem>` for an HTTPS origin)."""
    with static_origin_process(options) as (address, _):
        yield address


@contextlib.contextmanager
def static_origin_process(options: str = "") -> Iterator[tuple[str, int]]:
    """Yield (`127.0.0.1:<port>`, pid) of a running HAProxy origin; stop it afterwards."""
    with haproxy_running(lambda port: CONFIG.format(port=port, options=options and f" {options}")) as running:
        yield running


@contextlib.contextmanager
def haproxy_running(config: Callable[[int], str], what: str = "origin") -> Iterator[tuple[str, int]]:
    """Yield (`127.0.0.1:<port>`, pid) of a one-process HAProxy running `config(port)` on a free
    loopback port; stop it afterwards."""
    root = Path(tempfile.mkdtemp(prefix=f"rf-{what}-"))
    port = free_port()
    (root / "haproxy.cfg").write_text(config(port))
    proc = subprocess.Popen(
        ["haproxy", "-db", "-f", str(root / "haproxy.cfg")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:

        def listening() -> bool:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True

        eventually_sync(listening, ignore=(OSError,), what=f"the HAProxy {what} listening")
        yield f"127.0.0.1:{port}", proc.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
        shutil.rmtree(root, ignore_errors=True)
