"""Tier 3: the web filter deployed by `rayfleet up` (2 replicas) through Serve at /webfilter, with the real
Squid and dnsmasq owned by the webfilter_proxy actor: lists block live traffic, logs and the stream follow,
auth state is shared by both replicas."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import websockets

from tests.e2e.conftest import needs_app
from tests.polling import eventually, eventually_sync

PREFIX = "/webfilter"


class _Origin(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"origin ok {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def origin_port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Origin)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def wf(cluster, http: httpx.Client, cluster_secrets) -> httpx.Client:
    needs_app(cluster, "webfilter")
    http.auth = ("admin", cluster_secrets["WEBFILTER_ADMIN_PASSWORD"])
    return http


def proxy_client(wf: httpx.Client) -> httpx.Client:
    status = wf.get(PREFIX + "/api/status").json()["data"]["proxy"]
    assert status["running"] is True
    return httpx.Client(proxy=f"http://{status['proxy']}", trust_env=False, timeout=15)


def wait_logged(wf: httpx.Client, part: str) -> dict:
    def rows() -> list:
        return list(wf.get(PREFIX + "/api/logs", params={"search": part, "limit": 1}).json()["data"])

    return dict(eventually_sync(rows, what=f"{part} logged")[0])


def test_health_and_version_header(wf: httpx.Client) -> None:
    for path in ("/health", "/api/health"):
        r = httpx.get(str(wf.base_url) + PREFIX + path, timeout=10)
        assert r.status_code == 200 and r.json()["status"] == "healthy" and r.headers["x-api-version"] == "1"
    anonymous = httpx.get(str(wf.base_url) + PREFIX + "/api/settings", timeout=10)
    assert anonymous.status_code == 401 and anonymous.json()["status"] == "error"


def test_a_blacklisted_domain_is_refused_by_the_proxy_and_logged(wf: httpx.Client, origin_port: int) -> None:
    with proxy_client(wf) as proxy:
        assert proxy.get(f"http://allowed.test:{origin_port}/e2e-pass").text == "origin ok /e2e-pass"
        added = wf.post(PREFIX + "/api/domain-blacklist", json={"domain": "malware.test"})
        assert added.status_code == 200, added.text
        try:
            blocked = proxy.get(f"http://malware.test:{origin_port}/e2e-block")
            assert blocked.status_code == 403 and "domain_blacklist" in blocked.text
            row = wait_logged(wf, "/e2e-block")
            assert row["blocked"] is True and row["rule"] == "domain_blacklist"
            stats = wf.get(PREFIX + "/api/logs/stats").json()["data"]
            assert stats["domain_blocks_count"] >= 1
        finally:
            wf.delete(PREFIX + "/api/domain-blacklist/clear-all")
        assert proxy.get(f"http://malware.test:{origin_port}/e2e-again").status_code == 200


def test_logout_is_honoured_by_every_replica(wf: httpx.Client, cluster_secrets) -> None:
    password = cluster_secrets["WEBFILTER_ADMIN_PASSWORD"]
    tokens = wf.post(PREFIX + "/api/auth/login", json={"username": "admin", "password": password})
    access = tokens.json()["access_token"]
    bearer = {"Authorization": f"Bearer {access}"}
    anon = httpx.Client(base_url=str(wf.base_url), timeout=10)
    assert anon.post(PREFIX + "/api/logout", headers=bearer).status_code == 200
    replicas = set()
    for _ in range(12):
        r = anon.get(PREFIX + "/api/settings", headers=bearer)
        assert r.status_code == 401
        replicas.add(r.headers.get("x-rayfleet-replica"))
    assert len(replicas) == 2


def test_the_stream_carries_live_proxied_requests(wf: httpx.Client, origin_port: int, serve_url: str) -> None:
    token = wf.get(PREFIX + "/api/ws-token").json()["token"]
    ws_url = serve_url.replace("http://", "ws://") + PREFIX + f"/api/ws/logs?token={token}"

    async def run() -> dict:
        async with websockets.connect(ws_url) as ws:

            async def streamed() -> dict | None:
                # the replica's poller starts at "now" once this client has joined: a request logged
                # before that is not streamed, so proxy one until one arrives
                await asyncio.to_thread(lambda: proxy_client(wf).get(f"http://allowed.test:{origin_port}/e2e-stream"))
                try:
                    while True:
                        message = json.loads(await asyncio.wait_for(ws.recv(), 2))
                        if message["type"] == "log" and "/e2e-stream" in message["data"]["destination"]:
                            return dict(message["data"])
                except TimeoutError:
                    return None

            return await eventually(streamed, timeout=30, what="a proxied request on the stream")

    row = asyncio.run(run())
    assert row["status"] == 200 and row["blocked"] is False
    reused = serve_url.replace("http://", "ws://") + PREFIX + f"/api/ws/logs?token={token}"

    async def again() -> None:
        async with websockets.connect(reused):
            pass

    with pytest.raises(websockets.exceptions.InvalidStatus):
        asyncio.run(again())


def test_dns_queries_are_logged_with_the_rule_the_proxy_actor_credits(wf: httpx.Client) -> None:
    """The log actor asks the proxy actor (a Ray call between actors) which entry blocked a name."""
    import dns.message
    import dns.query

    server = wf.get(PREFIX + "/api/status").json()["data"]["proxy"]["dns"]
    added = wf.post(PREFIX + "/api/domain-blacklist", json={"domain": "dns-e2e.test"})
    assert added.status_code == 200, added.text
    try:
        answer = dns.query.udp(dns.message.make_query("ads.dns-e2e.test", "A"), server, timeout=5)
        assert [item.address for rrset in answer.answer for item in rrset] == ["0.0.0.0"]

        def row() -> list:
            rows = wf.get(PREFIX + "/api/dns/logs", params={"search": "ads.dns-e2e.test"}).json()["data"]
            return [r for r in rows if r["blocked"]]

        (logged, *_) = eventually_sync(row, timeout=20, what="the DNS row of ads.dns-e2e.test")
        assert (logged["outcome"], logged["rule"], logged["source"]) == (
            "sinkholed",
            "dns-e2e.test",
            "domain-blacklist",
        )
    finally:
        wf.delete(PREFIX + "/api/domain-blacklist/clear-all")
