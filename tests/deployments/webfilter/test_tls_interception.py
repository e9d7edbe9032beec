"""TLS interception (`ssl_bump_enabled`) on real HTTPS traffic through the real Squid.

Two HTTPS origins on loopback port 443 (Squid only lets CONNECT reach 443/8443): `secure.test` and
`evil.test` with a certificate from a test CA that Squid is given through `proxy.tls_outgoing_cafile`,
and `untrusted.test` whose CA Squid does not know. With bumping on, a client that trusts our
interception CA (from `GET /api/security/download-ca`) sees certificates signed by it, and the domain
blacklist, the WAF and the logs work on the full https URL; with bumping off the same request is a
tunnel and the client sees the origin's own certificate.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import ssl
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from cryptography import x509

from actors.webfilter.tlsfiles import tls_capable
from deployments.webfilter.config import ProxyConfig
from tests.conftest import free_port, in_ci
from tests.deployments.webfilter import tlsorigin
from tests.deployments.webfilter.conftest import (
    HOSTS,
    Origin,
    Service,
    require_dataplane,
    running_service,
    state_folder,
)
from tests.polling import eventually

pytestmark = pytest.mark.realserver

SQLI = "/search?q=1%27%20OR%20%271%27=%271"


@dataclass
class TlsOrigins:
    address: str  # secure.test and evil.test
    untrusted_address: str  # untrusted.test
    ca: x509.Certificate  # the origins' test CA, given to Squid
    ca_file: Path
    hits: list[str]


def _server_context(folder: Path, tag: str, cert: x509.Certificate, key: tlsorigin.Key) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*tlsorigin.write_pair(folder, tag, cert, key))
    return context


def _https_address() -> str:
    try:
        return tlsorigin.free_https_address()
    except PermissionError:
        message = "binding port 443 needs root (or CAP_NET_BIND_SERVICE)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
async def tls_origins() -> AsyncIterator[TlsOrigins]:
    folder = state_folder()  # Squid's own user reads the CA file
    ca_key, rogue_key, site_key = tlsorigin.new_key(), tlsorigin.new_key(), tlsorigin.new_key()
    ca = tlsorigin.issue("rayfleet test origin CA", ca_key, None, [])
    rogue = tlsorigin.issue("unknown test CA", rogue_key, None, [])
    site = tlsorigin.issue("secure.test", site_key, (ca, ca_key), ["secure.test", "evil.test"])
    other = tlsorigin.issue("untrusted.test", site_key, (rogue, rogue_key), ["untrusted.test"])
    ca_file = folder / "origin-ca.pem"
    ca_file.write_bytes(tlsorigin.pem(ca))
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(f"{request.host}{request.rel_url}")
        return web.Response(text=f"origin tls ok {request.path}")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    address, untrusted = _https_address(), _https_address()
    await web.TCPSite(runner, address, 443, ssl_context=_server_context(folder, "site", site, site_key)).start()
    await web.TCPSite(runner, untrusted, 443, ssl_context=_server_context(folder, "other", other, site_key)).start()
    yield TlsOrigins(address, untrusted, ca, ca_file, hits)
    await runner.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
async def tlswf(origin: Origin, tls_origins: TlsOrigins) -> AsyncIterator[Service]:
    require_dataplane()
    config = ProxyConfig()
    if not tls_capable(config.squid_bin, config.certgen_bin):
        message = "this Squid cannot bump TLS; run scripts/system-deps.sh (squid-openssl)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    hosts = {
        **HOSTS,
        "secure.test": tls_origins.address,
        "evil.test": tls_origins.address,
        "untrusted.test": tls_origins.untrusted_address,
    }
    proxy = ProxyConfig(hosts=hosts, port=free_port(), tls_outgoing_cafile=str(tls_origins.ca_file))
    async for service in running_service(state_folder(), origin, proxy=proxy):
        yield service


async def set_bump(wf: Service, on: bool) -> None:
    r = await wf.api.put("/api/settings/ssl_bump_enabled", json={"value": on})
    assert r.status_code == 200 and r.json()["data"] == {"ssl_bump_enabled": on}, r.text


async def our_ca(wf: Service) -> x509.Certificate:
    r = await wf.api.get("/api/security/download-ca")
    assert r.status_code == 200
    return x509.load_pem_x509_certificate(r.content)


def client(wf: Service, trusted: x509.Certificate) -> httpx.AsyncClient:
    """An https client through the proxy that trusts only `trusted`."""
    context = ssl.create_default_context(cadata=tlsorigin.pem(trusted).decode())
    return httpx.AsyncClient(proxy=f"http://127.0.0.1:{wf.proxy_port}", verify=context, trust_env=False, timeout=10)


def served_certificate(proxy_port: int, host: str) -> x509.Certificate:
    """The certificate a client gets after `CONNECT host:443` through the proxy (not verified here)."""
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=10) as raw:
        raw.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = raw.recv(4096)
            if not chunk:
                break
            head += chunk
        assert head.startswith(b"HTTP/1.1 200"), head
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with context.wrap_socket(raw, server_hostname=host) as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


async def tls_key_copy(wf: Service) -> Path:
    """Squid's copy of the interception CA key (in its state folder)."""
    status = await wf.app.state.component.proxy.status.remote()
    return Path(status["access_log"]).parent.parent / "tls" / "ca.key"


async def blocked_row(wf: Service, search: str, timeout: float = 10.0) -> dict:
    async def newest() -> dict | None:
        r = await wf.api.get("/api/logs", params={"search": search, "blocked": True, "limit": 1})
        return dict(r.json()["data"][0]) if r.status_code == 200 and r.json()["data"] else None

    row: dict = await eventually(newest, timeout=timeout, what=f"a blocked log row for {search}")
    return row


async def test_with_bumping_off_https_is_tunnelled_with_the_origins_certificate(tlswf, tls_origins):
    await set_bump(tlswf, False)
    cert = await asyncio.to_thread(served_certificate, tlswf.proxy_port, "secure.test")
    assert cert.issuer == tls_origins.ca.subject
    async with client(tlswf, tls_origins.ca) as c:
        r = await c.get("https://secure.test/tunnel-1")
        assert r.status_code == 200 and r.text == "origin tls ok /tunnel-1"
        # not inspected: Squid only sees CONNECT secure.test:443, so a WAF pattern in the path goes through
        assert (await c.get("https://secure.test" + SQLI)).status_code == 200
    async with client(tlswf, await our_ca(tlswf)) as c:
        with pytest.raises(httpx.ConnectError):
            await c.get("https://secure.test/tunnel-2")
    row = await tlswf.wait_logged("secure.test:443")
    assert row["method"] == "CONNECT" and row["squid_status"] == "TCP_TUNNEL"
    assert not any("/tunnel" in r["destination"] for r in (await tlswf.api.get("/api/logs")).json()["data"])


async def test_with_bumping_on_our_ca_signs_and_every_rule_sees_the_full_https_url(tlswf, tls_origins):
    ca = await our_ca(tlswf)
    seen = len(tls_origins.hits)
    await set_bump(tlswf, True)
    try:
        key_copy = await tls_key_copy(tlswf)
        assert key_copy.exists() and stat.S_IMODE(key_copy.stat().st_mode) == 0o600
        if os.geteuid() == 0:
            assert key_copy.stat().st_uid == pwd.getpwnam("proxy").pw_uid  # Squid reads it as its own user
        cert = await asyncio.to_thread(served_certificate, tlswf.proxy_port, "secure.test")
        assert cert.issuer == ca.subject
        cert.verify_directly_issued_by(ca)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert "secure.test" in names.get_values_for_type(x509.DNSName)
        async with client(tlswf, ca) as c:
            r = await c.get("https://secure.test/bumped-1?page=2")
            assert r.status_code == 200 and r.text == "origin tls ok /bumped-1"
            row = await tlswf.wait_logged("/bumped-1")
            assert row["destination"] == "https://secure.test/bumped-1?page=2" and row["method"] == "GET"
            assert row["host"] == "secure.test" and not row["blocked"]

            r = await c.get("https://secure.test" + SQLI)
            assert r.status_code == 403 and "waf:SQL_INJECTION" in r.text and "Blocked by the web filter" in r.text
            row = await blocked_row(tlswf, "https://secure.test/search")
            assert row["rule"] == "waf:SQL_INJECTION" and row["destination"] == "https://secure.test" + SQLI

            assert (await tlswf.api.post("/api/domain-blacklist", json={"domain": "evil.test"})).status_code == 200
            r = await c.get("https://evil.test/blacklisted-1")
            assert r.status_code == 403 and "domain_blacklist" in r.text
            row = await blocked_row(tlswf, "evil.test")
            assert row["rule"] == "domain_blacklist" and row["host"] == "evil.test"
            # inside an allowed CONNECT, each request is checked again: asking for evil.test through a
            # tunnel opened to secure.test (domain fronting) is refused and logged with its full URL
            r = await c.get("https://secure.test/fronted-1", headers={"Host": "evil.test"})
            assert r.status_code == 403 and "domain_blacklist" in r.text
            row = await blocked_row(tlswf, "/fronted-1")
            assert row["rule"] == "domain_blacklist" and row["destination"] == "https://evil.test/fronted-1"

            # Squid verifies the origin: a certificate from a CA it does not trust is an error, not a pass
            r = await c.get("https://untrusted.test/untrusted-1")
            assert r.status_code == 503
        assert not [
            h
            for h in tls_origins.hits[seen:]
            if "search" in h or "blacklisted" in h or "untrusted" in h or "fronted" in h
        ]
    finally:
        await tlswf.api.delete("/api/domain-blacklist/clear-all")
        await set_bump(tlswf, False)


async def tunnels(wf: Service) -> int:
    """CONNECT secure.test:443 rows Squid logged as tunnels (not bumped)."""
    rows = (await wf.api.get("/api/logs", params={"search": "secure.test:443", "limit": 1000})).json()["data"]
    return sum(1 for r in rows if r["squid_status"] == "TCP_TUNNEL")


async def test_a_name_on_the_splice_list_passes_unbumped_with_the_origins_certificate(tlswf, tls_origins):
    ca = await our_ca(tlswf)
    await set_bump(tlswf, True)
    tunnels_before = await tunnels(tlswf)
    added = await tlswf.api.post("/api/tls-splice", json={"domain": "secure.test", "description": "bank"})
    assert added.status_code == 200, added.text
    try:
        assert (await tlswf.api.post("/api/tls-splice", json={"domain": "secure.test"})).status_code == 409
        assert (await tlswf.api.post("/api/tls-splice", json={"domain": "bad name"})).status_code == 400
        listed = (await tlswf.api.get("/api/tls-splice")).json()["data"]
        assert [(e["domain"], e["description"]) for e in listed] == [("secure.test", "bank")]
        # spliced: the client gets the origin's own certificate, its TLS goes end to end
        spliced = await asyncio.to_thread(served_certificate, tlswf.proxy_port, "secure.test")
        assert spliced.issuer == tls_origins.ca.subject
        async with client(tlswf, tls_origins.ca) as c:
            r = await c.get("https://secure.test/spliced-1")
            assert r.status_code == 200 and r.text == "origin tls ok /spliced-1"

        # logged as a tunnel (CONNECT, TCP_TUNNEL), not as bumped requests
        async def tunnelled() -> bool:
            return await tunnels(tlswf) > tunnels_before

        await eventually(tunnelled, timeout=10, what="a TCP_TUNNEL row for the spliced connection")
        # the same origin under a name not on the list is still bumped with our CA
        bumped = await asyncio.to_thread(served_certificate, tlswf.proxy_port, "evil.test")
        assert bumped.issuer == ca.subject
        # the list is durable (config.db) and in the backup
        backup = (await tlswf.api.get("/api/maintenance/backup-config")).json()["data"]
        assert [e["domain"] for e in backup["lists"]["tls-splice"]] == ["secure.test"]
        # off the list again: bumped
        await tlswf.api.delete("/api/tls-splice/clear-all")
        again = await asyncio.to_thread(served_certificate, tlswf.proxy_port, "secure.test")
        assert again.issuer == ca.subject
    finally:
        await tlswf.api.delete("/api/tls-splice/clear-all")
        await set_bump(tlswf, False)


async def test_splice_categories_are_switched_per_category(tlswf):
    settings = (await tlswf.api.get("/api/settings")).json()["data"]
    assert settings["tls_splice_categories"] == ["banking", "health", "pinned_apps"]
    bad = await tlswf.api.put("/api/settings/tls_splice_categories", json={"value": ["banking", "gaming"]})
    assert bad.status_code == 400 and "gaming" in bad.json()["detail"]
    try:
        ok = await tlswf.api.put("/api/settings/tls_splice_categories", json={"value": ["health"]})
        assert ok.status_code == 200, ok.text
        status = await tlswf.app.state.component.proxy.status.remote()
        rendered = (Path(status["access_log"]).parent.parent / "acl" / "tls_splice.txt").read_text()
        assert ".nhs.uk" in rendered and ".paypal.com" not in rendered
    finally:
        await tlswf.api.put("/api/settings/tls_splice_categories", json={"value": ["banking", "health", "pinned_apps"]})


async def test_the_setting_takes_effect_and_the_score_counts_it_only_when_squid_bumps(tlswf):
    ca = await our_ca(tlswf)
    await set_bump(tlswf, False)
    base = (await tlswf.api.get("/api/security/score")).json()["data"]
    assert base["checks"]["ssl_bump"] is False and base["max_score"] == 100
    report = (await tlswf.api.get("/api/maintenance/check-cert-security")).json()["data"]
    assert report["interception_enabled"] is False and "tunnelled" in report["interception_note"]

    async with client(tlswf, ca) as c:
        with pytest.raises(httpx.ConnectError):
            await c.get("https://secure.test/toggle-1")
        await set_bump(tlswf, True)
        try:
            assert (await c.get("https://secure.test/toggle-2")).status_code == 200
            on = (await tlswf.api.get("/api/security/score")).json()["data"]
            assert on["checks"]["ssl_bump"] is True and on["score"] == base["score"] + 15
            report = (await tlswf.api.get("/api/maintenance/check-cert-security")).json()["data"]
            assert report["interception_enabled"] is True and report["ok"] is True

            # the setting alone earns nothing: with Squid down, nothing is bumped
            context = tlswf.app.state.component
            await context.proxy.stop.remote()
            try:
                down = (await tlswf.api.get("/api/security/score")).json()["data"]
                assert down["checks"]["ssl_bump"] is False and down["score"] == base["score"]
                report = (await tlswf.api.get("/api/maintenance/check-cert-security")).json()["data"]
                assert report["interception_enabled"] is False and "not bumping" in report["interception_note"]
            finally:
                await context.proxy.ensure.remote(await context.db(context.store.effective_policy))
            assert (await c.get("https://secure.test/toggle-3")).status_code == 200
        finally:
            await set_bump(tlswf, False)
    assert not (await tls_key_copy(tlswf)).exists()  # no copy of the CA key while bumping is off
    # a change applies to new connections (an open keep-alive connection stays as it was set up)
    async with client(tlswf, ca) as c:
        with pytest.raises(httpx.ConnectError):
            await c.get("https://secure.test/toggle-4")


async def test_the_cve_route_reads_the_changelog_of_the_installed_openssl_build(tlswf):
    r = await tlswf.api.get("/api/security/cve")
    data = r.json()["data"]
    assert data["version"].startswith("5.") and data["package_version"].startswith("5.")
    assert data["cves"] and all(c["id"].startswith("CVE-") for c in data["cves"])
