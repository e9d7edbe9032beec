"""The gateway's own data-plane listener: the same app on ``server.host:server.port``.

Ray Serve's HTTP proxy adds a hop to every request (client → proxy actor → Ray RPC →
replica) that costs more than the gateway's own logic. ``GatewayListener`` is an async
Ray actor that builds the same app as the Serve replicas (``create_app``, with the same
named actors for breakers, budget, rate limits, registry and the metrics hub, so limits,
spend, breaker states and metrics are shared cluster-wide) and serves it with uvicorn
on its own port, in the actor's event loop.

One listener exists per cluster (named detached actor ``llm_gateway.listener``); the
Serve replicas create it if it is missing and ask it for its state every few seconds,
which also re-binds it after an actor restart. Running one per node is future work.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from deployments.llm_gateway.config import GatewayConfig
from rayfleet import state as state_mod
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

LISTENER_ACTOR = "llm_gateway.listener"
LISTENER_CPUS = 0.05
RETRY_BIND_AFTER = 10.0


def _http_impl() -> str:
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: the actor's process owns its signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _public_host(host: str) -> str:
    if host not in ("0.0.0.0", "::", ""):
        return host
    try:
        import ray

        if ray.is_initialized():
            return ray.util.get_node_ip_address()
    except Exception:
        pass
    return "127.0.0.1"


def _bind(host: str, port: int) -> socket.socket:
    """A bound (not yet listening) TCP socket; uvicorn calls ``listen`` with its backlog."""
    family, kind, proto, _, addr = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class _SelfView:
    """What ``/health`` on the listener says about the listener: itself."""

    def __init__(self, listener: GatewayListener) -> None:
        self._listener = listener

    def view(self) -> dict[str, Any]:
        return self._listener.status()


class GatewayListener:
    """Async actor class serving the gateway app on its own port.

    ``config`` is the validated config as a dict (environment overrides already
    applied by the replica that created the actor); ``replicas`` is the divisor of the
    cluster-wide admission limits. ``state`` is only for tests (in-process stand-ins).
    """

    def __init__(self, config: dict[str, Any], replicas: int = 1, state: dict[str, Any] | None = None) -> None:
        self.config = GatewayConfig.model_validate(config)
        self.replicas = replicas
        self._state = state
        self.host = self.config.server.host
        self.port = self.config.server.port
        self.url = ""
        self.phase = "idle"
        self.error = ""
        self._last_attempt = 0.0
        self._server: _Server | None = None
        self._task: asyncio.Task[Any] | None = None
        self._lock: asyncio.Lock | None = None

    def status(self) -> dict[str, Any]:
        """``{"enabled", "url", "state", "error"}``; state is idle, starting, serving, failed or stopped."""
        return {
            "enabled": True,
            "url": self.url or f"http://{_public_host(self.host)}:{self.port}",
            "state": self.phase,
            "error": self.error or None,
        }

    async def start(self) -> dict[str, Any]:
        """Bind and serve (idempotent). A failed bind is retried at most every 10 s."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.phase in ("serving", "starting"):
                return self.status()
            if self.phase == "failed" and time.monotonic() - self._last_attempt < RETRY_BIND_AFTER:
                return self.status()
            self._last_attempt = time.monotonic()
            await self._start()
            return self.status()

    async def _start(self) -> None:
        from deployments.llm_gateway.app import create_app

        try:
            sock = _bind(self.host, self.port)
        except OSError as exc:
            self.phase, self.error = "failed", f"cannot bind {self.host}:{self.port}: {exc.strerror or exc}"
            log.error(
                "gateway listener could not bind; the Serve route keeps working",
                extra={"host": self.host, "port": self.port, "error": self.error},
            )
            return
        bound_host, bound_port = sock.getsockname()[:2]
        self.port = bound_port
        self.url = f"http://{_public_host(self.host)}:{bound_port}"
        self.phase, self.error = "starting", ""
        app = create_app(self.config, state=self._state, replicas=self.replicas, listener=_SelfView(self))
        server = _Server(
            uvicorn.Config(
                app,
                host=str(bound_host),
                port=bound_port,
                loop="asyncio",
                http=_http_impl(),
                lifespan="on",
                access_log=False,
                proxy_headers=False,
                log_level="warning",
                server_header=False,
                timeout_keep_alive=int(max(1, self.config.server.keep_alive)),
            )
        )
        self._server = server
        self._task = asyncio.get_running_loop().create_task(self._serve(server, sock))
        while not server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if server.started:
            self.phase = "serving"
            log.info("gateway listener serving", extra={"url": self.url})

    async def _serve(self, server: _Server, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        except SystemExit:  # uvicorn exits on a failed lifespan startup
            pass
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("gateway listener stopped", extra={"error": self.error})
        finally:
            sock.close()
            if self.phase != "stopped":
                self.phase = "failed"
                self.error = self.error or "server exited"

    async def ready(self) -> dict[str, Any]:
        """Start if needed and report ``{"url", "state", "error", "enabled"}``."""
        return await self.start()

    async def stop(self) -> dict[str, Any]:
        """Stop serving (in-flight requests finish first); ``ready()`` starts it again."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            self.phase = "stopped"
            if self._server is not None:
                self._server.should_exit = True
            if self._task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(self._task), 30)
            self._server = self._task = None
            return self.status()


class ListenerWatch:
    """Replica side: makes sure the listener actor exists and keeps its last reported state.

    ``/health`` reads ``view()``; it never waits on the actor. The poll also re-binds a
    listener that Ray restarted (its constructor alone does not bind).
    """

    def __init__(self, config: GatewayConfig, replicas: int, interval: float = 5.0) -> None:
        self._config = config.model_dump(mode="json")
        self._replicas = replicas
        self.interval = interval
        self.last: dict[str, Any] = {"enabled": True, "url": None, "state": "unknown", "error": None}
        self._task: asyncio.Task[Any] | None = None

    def view(self) -> dict[str, Any]:
        return dict(self.last)

    def handle(self) -> Any:
        return state_mod.actor(
            GatewayListener, LISTENER_ACTOR, self._config, self._replicas, num_cpus=LISTENER_CPUS, max_restarts=-1
        )

    async def poll(self) -> dict[str, Any]:
        try:
            handle = await asyncio.to_thread(self.handle)
            self.last = await handle.ready.remote()
        except Exception as exc:
            self.last = {"enabled": True, "url": None, "state": "unreachable", "error": type(exc).__name__}
            log.warning("gateway listener unreachable", extra={"error": type(exc).__name__})
        return self.last

    async def _run(self) -> None:
        while True:
            await self.poll()
            await asyncio.sleep(self.interval)

    async def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
