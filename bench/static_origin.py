"""A static HTTP origin for benchmarks: HAProxy answering from memory (`http-request return`).

No Python in its request path, so it is far faster than anything it serves. `rules` are
(condition, status, content type, file with the body) tried in order; the last one may have
an empty condition (always).
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from rayfleet.launcher import free_port


@dataclass
class Rule:
    condition: str  # an HAProxy ACL expression such as '{ path_end /models }', or '' for always
    status: int
    content_type: str
    body: bytes


def start(
    folder: Path,
    rules: list[Rule],
    *,
    buffer_request: bool = False,
    address: str = "127.0.0.1",
    port: int = 0,
    tls_bundle: Path | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """Start HAProxy on `address`:`port` (0: a free one), over TLS with `tls_bundle` (certificate + key
    PEM) when given; returns (process, port)."""
    folder.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    lines = [
        "global",
        "  maxconn 4000",
        "  tune.bufsize 65536",
        "defaults",
        "  mode http",
        "  timeout connect 5s",
        "  timeout client 60s",
        "  timeout server 60s",
        "frontend origin",
        f"  bind {address}:{port}" + (f" ssl crt {tls_bundle}" if tls_bundle else ""),
    ]
    if buffer_request:
        lines.append("  option http-buffer-request")
    for i, rule in enumerate(rules):
        body = folder / f"body-{i}"
        body.write_bytes(rule.body)
        when = f" if {rule.condition}" if rule.condition else ""
        lines.append(f'  http-request return status {rule.status} content-type "{rule.content_type}" file {body}{when}')
    cfg = folder / "origin.cfg"
    cfg.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen(
        ["haproxy", "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"haproxy origin exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            with socket.create_connection((address, port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("haproxy origin did not start")
