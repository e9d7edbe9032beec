"""An HTTPS list download goes to the address the SSRF check approved, and still verifies the name.

A name looked up twice (once for the check, once by the HTTP client) lets a DNS server answer a
public address to the check and a private one to the connection (DNS rebinding). The download
resolves once; the TLS handshake names the host (SNI) and the certificate must be valid for it.
The name `lists.test` resolves only through the patched `resolve`: the machine's resolver is never
asked (tests/netguard.py refuses it), so a second lookup would fail the download.
"""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.webfilter import fetch as fetch_module
from actors.webfilter.fetch import FetchError, fetch
from tests.deployments.webfilter.tlsorigin import issue, new_key, pem, write_pair

LIST = b"ads.example\ntracker.example\n"


class _ListHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(LIST)))
        self.end_headers()
        self.wfile.write(LIST)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def tls_material(tmp_path: Path) -> dict[str, Path]:
    ca_key = new_key()
    ca = issue("fetch test CA", ca_key, None, [])
    (tmp_path / "ca.pem").write_bytes(pem(ca))
    out = {"ca": tmp_path / "ca.pem"}
    for host in ("lists.test", "other.test"):
        key = new_key()
        out[host], _ = write_pair(tmp_path, host, issue(host, key, (ca, ca_key), [host]), key)
        out[host + ".key"] = tmp_path / f"{host}.key"
    return out


def _serve(cert: Path, key: Path) -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ListHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def list_server(tls_material: dict[str, Path]) -> Iterator[int]:
    yield from _serve(tls_material["lists.test"], tls_material["lists.test.key"])


@pytest.fixture
def wrong_name_server(tls_material: dict[str, Path]) -> Iterator[int]:
    yield from _serve(tls_material["other.test"], tls_material["other.test.key"])


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`lists.test` resolves to 127.0.0.1 through the fetcher's own lookup, which is counted."""
    seen: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        seen.append(host)
        return ["127.0.0.1"]

    monkeypatch.setattr(fetch_module, "resolve", resolve)
    return seen


def _trusting(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


async def test_https_download_connects_to_the_checked_address_without_a_second_lookup(
    list_server: int, lookups: list[str], tls_material: dict[str, Path]
) -> None:
    got = await fetch(
        f"https://lists.test:{list_server}/hosts.txt",
        10_000,
        is_allowed=lambda address: address == "127.0.0.1",
        verify=_trusting(tls_material["ca"]),
    )
    assert got.status == 200 and got.body == LIST
    assert lookups == ["lists.test"]


async def test_https_download_still_verifies_the_certificate_against_the_url_host(
    wrong_name_server: int, lookups: list[str], tls_material: dict[str, Path]
) -> None:
    with pytest.raises(FetchError) as refused:
        await fetch(
            f"https://lists.test:{wrong_name_server}/hosts.txt",
            10_000,
            is_allowed=lambda address: address == "127.0.0.1",
            verify=_trusting(tls_material["ca"]),
        )
    assert refused.value.status == 502


async def test_https_download_to_a_refused_address_never_connects(lookups: list[str]) -> None:
    with pytest.raises(FetchError) as refused:
        await fetch("https://lists.test/hosts.txt", 10_000, verify=True)
    assert refused.value.status == 400 and "non-public" in refused.value.detail


class _Receiver(http.server.BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.headers["Host"], body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[int]:
    _Receiver.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


async def test_a_notification_goes_to_the_checked_address_without_a_second_lookup(
    receiver: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deployments.webfilter import notify

    seen: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        seen.append(host)
        return ["127.0.0.1"]

    monkeypatch.setattr(notify, "resolve", resolve)
    settings = {"notify_webhook_url": f"http://hooks.test:{receiver}/in", "notify_allow_private_targets": True}
    settings |= {key: "" for key in ("notify_ntfy_url", "notify_gotify_url", "notify_teams_url")}
    settings |= {key: "" for key in ("notify_telegram_url", "notify_syslog_address", "notify_gotify_token")}
    outcome = await notify.send_all(settings, "WAF block", "blocked", {"event": "waf"})
    assert outcome == {"webhook": {"ok": True, "status_code": 204}}
    assert seen == ["hooks.test"]
    assert [host for host, _ in _Receiver.received] == [f"hooks.test:{receiver}"]
