"""Direct ingress: every Serve replica also serves its app on the component's own port.

Serve's HTTP proxy costs more per request than any component's own work (docs/ingress.md).
A component that declares a direct port gets, inside each of its replicas, a uvicorn
server on a ``SO_REUSEPORT`` socket bound to that port: every replica of a node binds
the same address and the kernel spreads the node's connections over them. The server
runs in the replica's event loop and serves the very app object the Serve path serves,
so both paths share the replica's clients, caches and named actors (limits, breakers,
budgets, metrics). Serve keeps owning the replicas (placement, health, autoscaling,
rolling updates): the direct server starts in the app's lifespan startup and stops in
its shutdown, so it lives and dies with its replica.

Listener limits (every direct listener, `rayfleet.direct_protocol`): a connection that
starts no request within ``idle_timeout`` (or ``keep_alive`` after an answer) is closed;
request line + headers are capped (``max_header_bytes``, 431 above it) and must arrive
within ``read_timeout`` of the first byte (408 otherwise); a request body that stalls
longer than ``read_timeout`` between two chunks, or is not complete ``body_timeout``
seconds after the headers plus one second per ``body_min_rate`` bytes received, gets a
408. Every rejection closes the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn

from rayfleet.direct_protocol import Limits, Pending, guarded_protocol
from rayfleet.logs import get_logger

log = get_logger("rayfleet")

TLS_VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


@dataclass(frozen=True)
class DirectSpec:
    """Where and how a component's data plane is served without the proxy hop.

    ``host`` "node" binds the Ray node's own address (one URL per node); any other
    value is bound as given (the default loopback address is shared by every replica
    on the machine).
    """

    port: int
    host: str = "127.0.0.1"
    tls_cert: str = ""
    tls_key: str = ""
    tls_min_version: str = "1.2"
    max_header_bytes: int = 65536
    read_timeout: float = 30.0
    keep_alive: float = 5.0
    idle_timeout: float = 15.0
    body_timeout: float = 30.0
    body_min_rate: float = 1024.0

    @classmethod
    def from_args(cls, value: Any) -> DirectSpec | None:
        """serve.yaml ``args.direct``: ``{port, host, tls: {cert_file, key_file, min_version}, ...}``."""
        if not value:
            return None
        if isinstance(value, int):
            return cls(port=value)
        tls = value.get("tls") or {}
        return cls(
            port=int(value["port"]),
            host=str(value.get("host", "127.0.0.1")),
            tls_cert=str(tls.get("cert_file", "")),
            tls_key=str(tls.get("key_file", "")),
            tls_min_version=str(tls.get("min_version", "1.2")),
            max_header_bytes=int(value.get("max_header_bytes", 65536)),
            read_timeout=float(value.get("read_timeout", 30.0)),
            keep_alive=float(value.get("keep_alive", 5.0)),
            idle_timeout=float(value.get("idle_timeout", 15.0)),
            body_timeout=float(value.get("body_timeout", 30.0)),
            body_min_rate=float(value.get("body_min_rate", 1024.0)),
        )

    @property
    def limits(self) -> Limits:
        """The per-connection limits the listener's protocol enforces."""
        return Limits(
            max_header_bytes=self.max_header_bytes,
            read_timeout=self.read_timeout,
            idle_timeout=self.idle_timeout,
            keep_alive=self.keep_alive,
            body_timeout=self.body_timeout,
            body_min_rate=self.body_min_rate,
        )

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ValueError(f"direct port {self.port} out of range")
        if self.tls_min_version not in TLS_VERSIONS:
            raise ValueError(f"tls min_version must be one of {sorted(TLS_VERSIONS)}, got {self.tls_min_version!r}")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("tls needs both cert_file and key_file")
        self.limits  # noqa: B018 - validates the limits at load time


def node_address() -> str:
    """This Ray node's IP (loopback outside Ray)."""
    try:
        import ray

        if ray.is_initialized():
            return str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
    except Exception:  # outside a Ray worker: loopback
        pass
    return "127.0.0.1"


def bind_reuseport(host: str, port: int) -> socket.socket:
    """A bound, non-blocking TCP socket other processes may bind too (``SO_REUSEPORT``)."""
    family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(addr)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _protocol_class(spec: DirectSpec, pending: Pending) -> Any:
    return guarded_protocol(spec.limits, pending)


def _ssl_factory(spec: DirectSpec) -> Any:
    def factory(config: uvicorn.Config, default: Any) -> ssl.SSLContext:
        context: ssl.SSLContext = default()
        context.minimum_version = TLS_VERSIONS[spec.tls_min_version]
        return context

    return factory


class _NoSignals(uvicorn.Server):
    """uvicorn without its signal handlers: the replica process owns its signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class DirectServer:
    """One replica's direct listener for ``app`` (start/stop from the app's lifespan)."""

    def __init__(self, app: Any, spec: DirectSpec) -> None:
        self.spec = spec
        self.app = app
        self.pending = Pending()
        self.host = node_address() if spec.host == "node" else spec.host
        self.state = "idle"
        self.error: str | None = None
        self._server: _NoSignals | None = None
        self._task: asyncio.Task[Any] | None = None

    @property
    def url(self) -> str:
        host = node_address() if self.host in ("0.0.0.0", "::", "") else self.host
        return f"{self.spec.scheme}://{host}:{self.spec.port}"

    @property
    def ongoing(self) -> int:
        """Direct requests received and not yet answered (queued or running)."""
        return self.pending.count

    def view(self) -> dict[str, Any]:
        """``{"enabled", "url", "state", "error"}``: what /health reports about the listener."""
        return {"enabled": True, "url": self.url, "state": self.state, "error": self.error}

    def _config(self) -> uvicorn.Config:
        spec = self.spec
        tls: dict[str, Any] = {}
        if spec.tls_cert:
            tls = {
                "ssl_certfile": spec.tls_cert,
                "ssl_keyfile": spec.tls_key,
                "ssl_context_factory": _ssl_factory(spec),
            }
        return uvicorn.Config(
            self.app,
            host=self.host,
            port=spec.port,
            http=_protocol_class(spec, self.pending),
            lifespan="off",
            access_log=False,
            proxy_headers=False,
            log_level="warning",
            server_header=False,
            timeout_keep_alive=max(1, int(spec.keep_alive)),
            **tls,
        )

    async def start(self) -> None:
        """Bind and serve; a failed bind is reported (state ``failed``), the Serve path keeps working."""
        try:
            sock = bind_reuseport(self.host, self.spec.port)
        except OSError as exc:
            self.state, self.error = "failed", f"cannot bind {self.host}:{self.spec.port}: {exc.strerror or exc}"
            log.error("direct listener could not bind", extra={"url": self.url, "error": self.error})
            return
        server = _NoSignals(self._config())
        self._server = server
        self.state = "starting"
        self._task = asyncio.get_running_loop().create_task(self._serve(server, sock))
        while not server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if server.started:
            self.state = "serving"

    async def _serve(self, server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        except SystemExit:
            pass
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("direct listener stopped", extra={"error": self.error})
        finally:
            sock.close()
            if self.state != "stopped":
                self.state = "failed"
                self.error = self.error or "server exited"

    async def stop(self, grace: float = 10.0) -> None:
        """Stop accepting, let in-flight requests finish (at most ``grace`` seconds)."""
        self.state = "stopped"
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._task), grace)
        self._server = self._task = None


_ACTIVE: DirectServer | None = None


def active() -> DirectServer | None:
    """The direct listener of this replica process, if any."""
    return _ACTIVE


def attach(app: Any, spec: DirectSpec) -> DirectServer:
    """Run a direct listener for FastAPI ``app`` for as long as the app's lifespan runs."""
    global _ACTIVE
    server = DirectServer(app, spec)
    _ACTIVE = server
    original = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with original(application) as state:
            await server.start()
            try:
                yield state
            finally:
                await server.stop()

    app.router.lifespan_context = lifespan
    return server


class ActiveView:
    """``view()`` of this replica's direct listener, resolved when asked (for /health pages)."""

    def view(self) -> dict[str, Any]:
        server = active()
        if server is None:
            return {"enabled": False, "url": None, "state": "off", "error": None}
        return server.view()
