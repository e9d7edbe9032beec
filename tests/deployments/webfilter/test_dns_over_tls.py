"""DNS over TLS upstreams on a real network: a DoT server (unbound, a certificate from a test CA) in a network
namespace the test makes, answering a test zone; our dnsmasq forwards to the component's own unbound
forwarder on loopback, which speaks TLS to it. Allowed names resolve through TLS, blocked names are still
sinkholed, a certificate for the wrong name or from an untrusted CA fails closed (SERVFAIL), and the server's
plain port 53 sees nothing (an nftables counter in its namespace). Nothing is sent anywhere else."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path

import dns.message
import dns.query
import dns.rcode
import pytest

from tests.deployments.webfilter.dotserver import ANSWER, dot_server
from tests.deployments.webfilter.netns import add_ipv6, namespace
from tests.polling import eventually

pytestmark = pytest.mark.realserver

CERT_NAME = "dns.dot.example"
ZONE = "zone.dot.example"


async def _ask(wf, name: str) -> tuple[str, list[str]]:
    """(rcode text, A records) our dnsmasq answers for `name`; ("TIMEOUT", []) when nothing answers in 4 s."""
    server = (await wf.api.get("/health")).json()["dns"]["address"].removesuffix(":53")
    query = dns.message.make_query(name, "A")
    try:
        answer = await asyncio.to_thread(dns.query.udp, query, server, timeout=4)
    except dns.exception.Timeout:
        return "TIMEOUT", []
    return dns.rcode.to_text(answer.rcode()), sorted(i.address for r in answer.answer for i in r)


async def _set(wf, **values) -> dict:
    r = await wf.api.post("/api/settings", json=values)
    assert r.status_code == 200, r.text
    return r.json()


async def _dot(wf) -> dict | None:
    return (await wf.api.get("/api/status")).json()["data"]["proxy"]["dns_dot"]


@pytest.mark.parametrize(
    "entry, words",
    [
        ("tls://198.18.0.2:853", "tls://ADDR[:PORT]#NAME"),  # no name to verify: refused, never unverified
        ("tls://198.18.0.2:853#", "tls://ADDR[:PORT]#NAME"),
        ("tls://dns.example:853#dns.example", "tls://ADDR[:PORT]#NAME"),
        ("tls://198.18.0.2:70000#dns.example", "out of range"),
        ("tls://2001:db8::1#dns.example", "tls://ADDR[:PORT]#NAME"),
        ("tls://[198.18.0.2]:853#dns.example", "brackets"),
        ("tls://198.18.0.2:853#bad_name.example", "DNS name"),
        ("tls://198.18.0.2:853#-x.example", "DNS name"),
        ("tls://198.18.0.2:853#a.example\nserver=9.9.9.9", "not resolvers"),
        ("tls://198.18.0.2:853#a#b", "tls://ADDR[:PORT]#NAME"),
    ],
)
async def test_a_bad_tls_upstream_is_refused_with_400_and_nothing_changes(wf, entry, words):
    before = (await wf.api.get("/api/settings")).json()["data"]["dns_upstreams"]
    r = await wf.api.put("/api/settings/dns_upstreams", json={"value": [entry]})
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["status"] == "error" and words in body["detail"], body
    assert (await wf.api.get("/api/settings")).json()["data"]["dns_upstreams"] == before


async def test_plain_and_tls_upstreams_cannot_be_mixed_and_a_ca_file_must_hold_certificates(wf, tmp_path):
    r = await wf.api.put("/api/settings/dns_upstreams", json={"value": ["198.18.0.2", "tls://198.18.0.3#dns.example"]})
    assert r.status_code == 400 and "cannot be mixed" in r.json()["detail"]
    garbage = tmp_path / "not-a-ca.pem"
    garbage.write_text("hello\n")
    for value, words in [
        ("relative/ca.pem", "absolute path"),
        (str(tmp_path / "missing.pem"), "not a regular file"),
        (str(garbage), "no PEM certificate"),
        ("/etc/ssl/certs/ca-certificates.crt\n", "absolute path"),
        (5, "absolute path"),
    ]:
        r = await wf.api.put("/api/settings/dns_upstream_ca_file", json={"value": value})
        assert r.status_code == 400 and words in r.json()["detail"], (value, r.text)
    assert (await wf.api.get("/api/settings")).json()["data"]["dns_upstream_ca_file"] == ""


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
async def test_names_resolve_through_tls_blocked_names_stay_sinkholed_and_a_wrong_certificate_fails_closed(
    wf, tmp_path: Path
):
    k = random.randint(2, 250)
    with namespace("dot", f"198.19.{k}") as up:
        _, peer6 = add_ipv6(up, f"2001:2:0:d{k:02x}::")  # a /64 no other test uses
        async with dot_server(up, tmp_path / "dot", CERT_NAME, ZONE, peer6=peer6) as server:
            try:
                saved = await _set(
                    wf, dns_upstreams=[server.upstream(CERT_NAME).upper()], dns_upstream_ca_file=str(server.ca_file)
                )
                assert saved["data"]["dns_upstreams"] == [f"tls://{up.peer}:853#{CERT_NAME}"]  # normalised, persisted
                settings = (await wf.api.get("/api/settings")).json()["data"]
                assert settings["dns_upstream_ca_file"] == str(server.ca_file)
                # an allowed name resolves, through TLS only
                assert await _ask(wf, f"a1.{ZONE}") == ("NOERROR", [ANSWER])
                assert await _ask(wf, f"a2.{ZONE}") == ("NOERROR", [ANSWER])
                dot = await _dot(wf)
                assert dot is not None and dot["running"] and dot["upstreams"] == [server.upstream(CERT_NAME)]
                health = (await wf.api.get("/health")).json()
                assert health["dns"]["dot_forwarder_running"] is True and health["status"] == "healthy"
                assert "unbound-dot" in {c["name"] for c in health["children"]}
                # a blocked name is still sinkholed by dnsmasq, never asked upstream
                r = await wf.api.post("/api/domain-blacklist", json={"domain": f"ads.{ZONE}"})
                assert r.status_code == 200, r.text
                assert await _ask(wf, f"ads.{ZONE}") == ("NOERROR", ["0.0.0.0"])
                assert await _ask(wf, f"x.ads.{ZONE}") == ("NOERROR", ["0.0.0.0"])
                # the forwarder is supervised: killed, it is back and names resolve again
                os.kill(dot["pid"], signal.SIGKILL)
                back = await eventually(_restarted(wf, dot["pid"]), timeout=15, what="the forwarder restarted")
                assert back["running"]
                await eventually(
                    lambda: _resolves(wf, f"a3.{ZONE}"), timeout=15, what="a name resolves after the restart"
                )
                # an IPv6 upstream
                await _set(wf, dns_upstreams=[server.upstream(CERT_NAME, six=True)])
                assert await _ask(wf, f"a6.{ZONE}") == ("NOERROR", [ANSWER])
                # the server's certificate is for another name: SERVFAIL, no fallback
                await _set(wf, dns_upstreams=[server.upstream("wrong.dot.example")])
                assert await _ask(wf, f"w1.{ZONE}") == ("SERVFAIL", [])
                # the right name, but the system store does not trust the test CA: SERVFAIL too
                await _set(wf, dns_upstreams=[server.upstream(CERT_NAME)], dns_upstream_ca_file="")
                assert await _ask(wf, f"w2.{ZONE}") == ("SERVFAIL", [])
                log = (Path((await wf.api.get("/api/status")).json()["data"]["proxy"]["dns_log"]).parent).joinpath(
                    "unbound-dot.log"
                )
                assert "certificate verify failed" in log.read_text()
                # and nothing of it all reached the server's plain port
                assert server.plain_packets() == 0
            finally:
                await wf.api.delete("/api/domain-blacklist/clear-all")
                await _set(wf, dns_upstreams=[], dns_upstream_ca_file="")
    assert await _dot(wf) is None
    assert "unbound-dot" not in {c["name"] for c in (await wf.api.get("/health")).json()["children"]}


def _restarted(wf, old_pid: int):
    async def check() -> dict | None:
        dot = await _dot(wf)
        return dot if dot and dot["running"] and dot["pid"] != old_pid else None

    return check


async def _resolves(wf, name: str) -> bool:
    return await _ask(wf, name) == ("NOERROR", [ANSWER])


async def test_a_ca_file_path_that_could_steer_unbound_or_never_end_is_refused(wf, tmp_path):
    """The path lands in unbound's configuration, whose parser splits on spaces and quotes, not lines: a quote
    in a path of a real PEM file would end the value and add options. A device or FIFO is never read."""
    ca = (await asyncio.to_thread(Path("/etc/ssl/certs/ca-certificates.crt").read_bytes))[:5000]
    steering = tmp_path / 'ca.pem"forward-first:yes"'
    steering.write_bytes(ca.split(b"-----END CERTIFICATE-----")[0] + b"-----END CERTIFICATE-----\n")
    for value in (str(steering), "/dev/zero"):
        r = await wf.api.put("/api/settings/dns_upstream_ca_file", json={"value": value})
        assert r.status_code == 400, (value, r.text)
        assert r.json()["status"] == "error"
    assert (await wf.api.get("/api/settings")).json()["data"]["dns_upstream_ca_file"] == ""
