"""A running web filter for the tests: the app in-process (local actor stand-ins), a real Squid and
dnsmasq on loopback, and a local origin on two loopback addresses. Everything stops at the end."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dns.message
import dns.query
import httpx
import pytest
from aiohttp import web
from pydantic import SecretStr

from deployments.webfilter.app import create_app
from deployments.webfilter.config import ProxyConfig, SubscriptionConfig, WebfilterConfig
from rayfleet import state
from tests.conftest import free_port, in_ci
from tests.polling import eventually

ADMIN_PASSWORD = "Test-Admin-pass-42!"
HOSTS = {
    "allowed.test": "127.0.0.1",
    "ads.tracker.test": "127.0.0.1",
    "cdn.ads.tracker.test": "127.0.0.1",
    "other.test": "127.0.0.1",
    "sub-one.test": "127.0.0.1",
    "second.test": "127.0.0.2",
    "files.dropbox.com": "127.0.0.1",
}


def require_dataplane() -> None:
    missing = [b for b in ("/usr/sbin/squid", "/usr/sbin/dnsmasq") if not Path(b).exists()]
    if missing:
        message = f"squid/dnsmasq not installed ({missing}); run scripts/system-deps.sh"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)


@dataclass
class Origin:
    port: int
    hits: list[str]


@dataclass
class Service:
    app: Any
    api: httpx.AsyncClient
    proxy: httpx.AsyncClient
    proxy_port: int
    origin: Origin
    root: Path

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.origin.port}{path}"

    async def wait_logged(self, url_part: str, timeout: float = 10.0) -> dict:
        """The newest log row whose URL contains `url_part` (polls the API; bounded)."""

        async def newest() -> dict | None:
            r = await self.api.get("/api/logs", params={"search": url_part, "limit": 1})
            return dict(r.json()["data"][0]) if r.status_code == 200 and r.json()["data"] else None

        row: dict = await eventually(newest, timeout=timeout, what=f"a log row for {url_part}")
        return row

    async def fetch(self, url: str) -> httpx.Response:
        return await self.proxy.get(url)

    async def resolve(self, name: str) -> list[str]:
        """The A records our dnsmasq answers for `name` (a real DNS query over UDP; [] for NXDOMAIN)."""
        server = (await self.api.get("/health")).json()["dns"]["address"].removesuffix(":53")
        query = dns.message.make_query(name, "A")
        answer = await asyncio.to_thread(dns.query.udp, query, server, timeout=3)
        return sorted(item.address for rrset in answer.answer for item in rrset)


async def start_origin() -> tuple[web.AppRunner, Origin]:
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(str(request.rel_url))
        if request.path == "/upstream-403":
            return web.Response(status=403, text="origin says no")
        return web.Response(text=f"origin ok {request.path}")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    for host in ("127.0.0.1", "127.0.0.2"):
        await web.TCPSite(runner, host, port).start()
    return runner, Origin(port, hits)


def make_config(root: Path, proxy: ProxyConfig | None = None, **overrides: Any) -> WebfilterConfig:
    return WebfilterConfig(
        data_dir=root,
        proxy=proxy or ProxyConfig(hosts=HOSTS),
        admin_password=SecretStr(ADMIN_PASSWORD),
        tail_interval_seconds=0.05,
        **overrides,
    )


async def running_service(root: Path, origin: Origin, **overrides: Any) -> AsyncIterator[Service]:
    with state.local_state():
        state.reset_local_state()
        app = create_app(make_config(root, **overrides))
        async with app.router.lifespan_context(app):
            status = await app.state.component.proxy.status.remote()
            api = httpx.AsyncClient(
                transport=httpx.ASGITransport(app), base_url="http://webfilter", auth=("admin", ADMIN_PASSWORD)
            )
            proxy = httpx.AsyncClient(proxy=f"http://127.0.0.1:{status['port']}", trust_env=False, timeout=10)
            try:
                yield Service(app, api, proxy, status["port"], origin, root)
            finally:
                await api.aclose()
                await proxy.aclose()
                await app.state.component.logs.stop.remote()
                await app.state.component.proxy.stop.remote()
        state.reset_local_state()
    shutil.rmtree(root, ignore_errors=True)


def state_folder() -> Path:
    """A fresh folder Squid's own user can reach (pytest's temporary folders are private to root)."""
    base = Path(tempfile.gettempdir()) / "rayfleet-webfilter-tests"
    base.mkdir(mode=0o711, exist_ok=True)
    os.chmod(base, 0o711)
    folder = Path(tempfile.mkdtemp(dir=base))
    os.chmod(folder, 0o711)
    return folder


class Receiver:
    """A local HTTP receiver on 127.0.0.1 (a target's protocol over a real socket); `stop()` once done."""

    def __init__(self, routes: list[tuple[str, str, Any]]) -> None:
        self.app = web.Application()
        for method, path, handler in routes:
            self.app.router.add_route(method, path, handler)
        self.runner = web.AppRunner(self.app, access_log=None)
        self.port = free_port()

    async def start(self) -> Receiver:
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        await self.runner.cleanup()


@pytest.fixture(scope="module")
async def origin() -> AsyncIterator[Origin]:
    runner, info = await start_origin()
    yield info
    await runner.cleanup()


@pytest.fixture(scope="module")
async def wf(origin: Origin) -> AsyncIterator[Service]:
    require_dataplane()
    root = state_folder()
    async for service in running_service(root, origin):
        yield service


@dataclass
class ListServer:
    """What the list server answers: `body` with a strong ETag and a Last-Modified, 304 when the client
    names the current ETag, or `failure` ("500" or "garbage")."""

    body: bytes = b""
    failure: str = ""
    seen: list[dict[str, str]] = field(default_factory=list)
    receiver: Receiver | None = None

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append({k: v for k, v in request.headers.items() if k.lower().startswith("if-")})
        if self.failure == "500":
            return web.Response(status=500, text="upstream broke")
        if self.failure == "garbage":
            return web.Response(body=b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" * 64, content_type="image/png")
        if self.failure == "html":
            return web.Response(text="<html><body>captive portal: please log in</body></html>")
        if request.headers.get("If-None-Match") == self.etag:
            return web.Response(status=304, headers={"ETag": self.etag})
        headers = {"ETag": self.etag, "Last-Modified": "Thu, 26 Nov 2026 10:00:00 GMT"}
        return web.Response(body=self.body, headers=headers, content_type="text/plain")

    def url(self, path: str = "/list.txt") -> str:
        assert self.receiver is not None
        return f"http://127.0.0.1:{self.receiver.port}{path}"


@pytest.fixture(scope="module")
async def lists() -> AsyncIterator[ListServer]:
    """A list server on loopback (subscriptions and URL imports download from it)."""
    server = ListServer()
    server.receiver = await Receiver([("GET", "/{name}", server.handle)]).start()
    yield server
    await server.receiver.stop()


async def subscribing_service(origin: Origin) -> AsyncIterator[Service]:
    """The web filter with a one-second minimum refresh interval and loopback list servers allowed."""
    require_dataplane()
    subscriptions = SubscriptionConfig(min_interval_seconds=1, allow_networks=["127.0.0.1/32"])
    async for service in running_service(state_folder(), origin, subscriptions=subscriptions):
        yield service
