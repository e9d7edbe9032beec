"""The public Serve port: HAProxy in front of Serve's HTTP proxy, holding the connection limits.

Serve's HTTP proxy is uvicorn inside Ray, and Serve configures it with two settings only
(``http_options``): ``keep_alive_timeout_s`` (idle time between two requests, after a
first answer) and ``request_timeout_s`` (a request's whole time, from the proxy's call to
the replica). Nothing bounds a connection that never sends a request, headers that
arrive a line at a time, or a body that trickles: uvicorn waits for them forever, and
Serve exposes none of uvicorn's other knobs. So ``rayfleet up`` puts HAProxy on the
public port (``RAYFLEET_HOST:RAYFLEET_PORT``) and moves Serve to a loopback port of its
own; HAProxy closes, within bounded times (`FrontSpec`, ``config/front.yaml``):

- a connection that sends no request: ``timeout http-request`` (HAProxy's 408);
- headers not complete within ``timeout http-request`` of the connection or of the end
  of the previous answer's keep-alive wait: 408;
- a body: ``option http-buffer-request`` waits for the body, or for its first buffer
  (``tune.bufsize``, 16 KiB with the headers), within ``timeout http-request`` before
  anything reaches Serve (408 otherwise);
- an idle keep-alive connection: ``timeout http-keep-alive``;
- more than ``max_connections_per_client`` connections open at once from one address:
  the extra ones are refused at accept.

What HAProxy 2.6 cannot do: a minimum body rate. Past its first buffer it forwards a body
at the client's pace; Serve's proxy bounds that part (`rayfleet.http.BodyPaceMiddleware`
in the proxy callback: 408 and ``Connection: close``, which HAProxy passes on).

HAProxy replaces any ``X-Forwarded-For`` the client sent with the socket peer, and Serve's
proxy is told to trust that header from HAProxy's loopback address only
(``FORWARDED_ALLOW_IPS``), so replicas still see the real client address. HAProxy is a
supervised child (`rayfleet.supervisor`): restarted if it exits or stops accepting.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from rayfleet.supervisor import Child, Status, Supervised, SupervisorThread, spawn_logged

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
BACKEND_HOST = "127.0.0.1"


@dataclass(frozen=True)
class FrontSpec:
    """The front's limits (seconds; ``config/front.yaml``)."""

    enabled: bool = True
    request_timeout: float = 15.0  # no request, or headers (+ first body buffer) not complete: 408
    keep_alive: float = 10.0  # idle between two requests
    client_timeout: float = 30.0  # client silence while HAProxy waits on it (answer being sent, closing)
    server_timeout: float = 310.0  # Serve's silence (504)
    connect_timeout: float = 5.0
    max_connections: int = 4096
    max_connections_per_client: int = 1024  # open at once from one address; more are refused

    def __post_init__(self) -> None:
        timeouts = (self.request_timeout, self.keep_alive, self.client_timeout, self.server_timeout)
        if min(*timeouts, self.connect_timeout) <= 0 or min(self.max_connections, self.max_connections_per_client) < 1:
            raise ValueError("front timeouts, max_connections and max_connections_per_client must be positive")

    @classmethod
    def load(cls, path: str | Path) -> FrontSpec:
        """``config/front.yaml`` (a missing file gives the defaults; unknown keys are refused)."""
        p = Path(path)
        data = yaml.safe_load(p.read_text()) if p.exists() else None
        data = data or {}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{p}: unknown front settings {unknown}; known: {sorted(known)}")
        return cls(**data)


def _ms(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def render(spec: FrontSpec, bind: tuple[str, int], backend_port: int) -> str:
    """The complete haproxy.cfg of the front on ``bind``, forwarding to Serve on ``backend_port``."""
    host, port = bind
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return f"""global
    maxconn {spec.max_connections}

defaults
    mode http
    option http-buffer-request
    timeout connect {_ms(spec.connect_timeout)}
    timeout client {_ms(spec.client_timeout)}
    timeout client-fin {_ms(min(spec.client_timeout, 5.0))}
    timeout server {_ms(spec.server_timeout)}
    timeout http-request {_ms(spec.request_timeout)}
    timeout http-keep-alive {_ms(spec.keep_alive)}
    timeout tunnel {_ms(max(spec.server_timeout, 3600.0))}

frontend serve
    bind {address}
    stick-table type ipv6 size 100k expire 60s store conn_cur
    tcp-request connection track-sc0 src
    tcp-request connection reject if {{ sc0_conn_cur gt {spec.max_connections_per_client} }}
    http-request set-header X-Forwarded-For %[src]
    default_backend serve

backend serve
    retry-on conn-failure
    server serve {BACKEND_HOST}:{backend_port}
"""


async def _listening(host: str, port: int) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 2)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


class Front:
    """HAProxy on the public port, supervised from `rayfleet up` (a thread's loop: `up` has none)."""

    def __init__(self, spec: FrontSpec, bind: tuple[str, int], backend_port: int, folder: Path) -> None:
        self.spec = spec
        self.bind = bind
        self.backend_port = backend_port
        self.config = folder / "front-haproxy.cfg"
        self.log = folder / "front-haproxy.log"
        self._thread: SupervisorThread | None = None

    async def _spawn(self) -> Child:
        proc = await spawn_logged(HAPROXY, "-db", "-f", str(self.config), log=self.log, new_session=False)
        host = "127.0.0.1" if self.bind[0] in ("0.0.0.0", "::", "") else self.bind[0]
        for _ in range(100):
            if proc.returncode is not None:
                break
            if await _listening(host, self.bind[1]):
                return proc
            await asyncio.sleep(0.05)
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        raise RuntimeError(f"haproxy did not start on {self.bind[0]}:{self.bind[1]}: {self._tail()}")

    def _tail(self) -> str:
        try:
            return self.log.read_text()[-2000:]
        except OSError:
            return ""

    async def _probe(self) -> bool:
        host = "127.0.0.1" if self.bind[0] in ("0.0.0.0", "::", "") else self.bind[0]
        return await _listening(host, self.bind[1])

    def start(self) -> None:
        """Write the config, check it (``haproxy -c``), start HAProxy and supervise it."""
        import subprocess

        if not Path(HAPROXY).exists():
            raise RuntimeError("haproxy is not installed: run scripts/system-deps.sh, or start with --front none")
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(render(self.spec, self.bind, self.backend_port))
        check = subprocess.run([HAPROXY, "-c", "-q", "-f", str(self.config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy refused {self.config}: {check.stdout}{check.stderr}")
        self._thread = SupervisorThread("front")
        self._thread.start(Supervised("front-haproxy", self._spawn, probe=self._probe))

    def statuses(self) -> list[Status]:
        return self._thread.statuses() if self._thread else []

    def view(self) -> dict[str, Any]:
        """What `rayfleet up` records about the front (state file, `rayfleet status`)."""
        return {
            "kind": "haproxy",
            "address": f"{self.bind[0]}:{self.bind[1]}",
            "serve_port": self.backend_port,
            "children": self.statuses(),
        }

    def stop(self) -> None:
        if self._thread is not None:
            self._thread.close()
            self._thread = None
