"""TLS and HTTP/2 on l7 nodes (issue 23), on real HAProxy with real clients: ALPN h2, the minimum
version, every defence still on TLS traffic (h2 counted per request), HTTPS origins verified against
their own CA, and a certificate replaced through the runtime API with no reload and no failed request,
kept across a node restart. The key never shows in an answer, an error or the rendered config."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.mitigation.haproxy_config import FRONTEND
from actors.mitigation.haproxy_stats import parse_table
from deployments.mitigation.config import load
from rayfleet.config import ConfigError
from rayfleet.state import LocalActorHandle
from tests.actors.mitigation.certs import CertificateAuthority, Issued
from tests.actors.mitigation.origin import static_origin
from tests.deployments.mitigation.conftest import Fleet, fleet_settings
from tests.deployments.mitigation.proxy_protocol import proxy_v1
from tests.deployments.mitigation.test_kept_state import crash
from tests.deployments.mitigation.tls_clients import client_context, handshake, https_client
from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"
HOSTS = ["localhost", "127.0.0.1"]


@pytest.fixture
def ca(tmp_path: Path) -> CertificateAuthority:
    return CertificateAuthority(tmp_path / "ca")


@pytest.fixture
def issued(ca: CertificateAuthority) -> Issued:
    return ca.signed(HOSTS)


def tls(issued: Issued, **extra: Any) -> dict[str, Any]:
    return {"cert_file": str(issued.cert_file), "key_file": str(issued.key_file), **extra}


def url(fleet: Fleet, path: str = "/") -> str:
    return f"https://{fleet.node().address}{path}"


def key_line(issued: Issued) -> str:
    return issued.pair.key_pem.strip().splitlines()[1]


# -- bad input and secrets first ---------------------------------------------------------
async def test_a_replacement_whose_key_is_not_the_certificates_is_422_and_changes_nothing(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued))
    other, stranger = ca.signed(HOSTS), ca.signed(HOSTS)
    answer = await fleet.client.put(
        f"{NODE}/tls/certificate", json={"cert_pem": other.pair.cert_pem, "key_pem": stranger.pair.key_pem}
    )
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "validation_error"
    assert "does not match" in answer.json()["error"]["message"]
    assert key_line(stranger) not in answer.text
    garbled = await fleet.client.put(f"{NODE}/tls/certificate", json={"cert_pem": "x", "key_pem": "y"})
    assert garbled.status_code == 422 and garbled.json()["error"]["code"] == "validation_error"
    typed = await fleet.client.put(f"{NODE}/tls/certificate", json={"cert_pem": other.pair.cert_pem, "key_pem": 1})
    assert typed.status_code == 422 and typed.json()["error"]["code"] == "validation_error"
    served = await handshake(fleet.node().address, client_context(ca.ca_file))
    assert served.serial == issued.serial and served.status == 200
    assert fleet.node().paths.certificate.read_text() == issued.pair.combined


async def test_a_node_without_tls_refuses_a_certificate_with_409(fleet, issued):
    body = {"cert_pem": issued.pair.cert_pem, "key_pem": issued.pair.key_pem}
    answer = await fleet.client.put(f"{NODE}/tls/certificate", json=body)
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "conflict"
    assert (await fleet.client.get(f"{NODE}/tls/certificate")).json()["enabled"] is False


async def test_the_key_is_in_a_0600_pem_and_never_in_answers_logs_or_the_config(make_fleet, ca, issued, caplog):
    caplog.set_level(logging.DEBUG)
    fleet = await make_fleet(tls=tls(issued))
    node = fleet.node()
    assert node.paths.certificate.stat().st_mode & 0o777 == 0o600
    config = node.paths.config.read_text()
    assert f"ssl crt {node.paths.certificate}" in config and "PRIVATE KEY" not in config
    fresh = ca.signed(HOSTS)
    body = {"cert_pem": fresh.pair.cert_pem, "key_pem": fresh.pair.key_pem}
    answers = [await fleet.client.put(f"{NODE}/tls/certificate", json=body)]
    for path in (f"{NODE}/tls/certificate", f"{NODE}/status", "/api/v1/policy", "/api/v1/nodes", "/metrics"):
        answers.append(await fleet.client.get(path))
    answers.append(
        await fleet.client.post("/api/v1/policy", json={"name": "p", "rules": [{"type": "rate_limit", "value": 9}]})
    )
    for answer in answers:
        assert answer.status_code < 300, answer.text
        assert "PRIVATE KEY" not in answer.text and key_line(fresh) not in answer.text
        assert key_line(issued) not in answer.text
    assert node.paths.certificate.stat().st_mode & 0o777 == 0o600
    assert "PRIVATE KEY" not in caplog.text and key_line(fresh) not in caplog.text


# -- protocols ---------------------------------------------------------------------------
async def test_alpn_negotiates_h2_and_requests_reach_the_origin(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued))
    async with https_client(ca.ca_file) as client:
        answer = await client.get(url(fleet))
    assert answer.status_code == 200 and answer.http_version == "HTTP/2"
    assert answer.text == "hello from the origin"
    h1 = await handshake(fleet.node().address, client_context(ca.ca_file, alpn=["http/1.1"]))
    assert h1.alpn == "http/1.1" and h1.status == 200
    view = (await fleet.client.get(f"{NODE}/tls/certificate")).json()
    assert view["serial"] == issued.serial and view["alpn"] == ["h2", "http/1.1"] and view["source"] == "files"


async def test_alpn_can_be_limited_to_http1(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued, alpn=["http/1.1"]))
    shaken = await handshake(fleet.node().address, client_context(ca.ca_file, alpn=["h2", "http/1.1"]))
    assert shaken.alpn == "http/1.1" and shaken.status == 200


async def test_tls_1_1_is_refused_when_the_minimum_is_1_2(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued, min_version="TLSv1.2"))
    old = await handshake(fleet.node().address, client_context(ca.ca_file, max_version=ssl.TLSVersion.TLSv1_1))
    assert old.serial is None and old.status == 0
    assert "NO_PROTOCOLS_AVAILABLE" not in old.error  # the client offered TLS 1.1: the node refused it
    ok = await handshake(fleet.node().address, client_context(ca.ca_file, max_version=ssl.TLSVersion.TLSv1_2))
    assert ok.version == "TLSv1.2" and ok.status == 200


async def test_tls_1_2_is_refused_when_the_minimum_is_1_3(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued, min_version="TLSv1.3"))
    old = await handshake(fleet.node().address, client_context(ca.ca_file, max_version=ssl.TLSVersion.TLSv1_2))
    assert old.serial is None and old.status == 0
    new = await handshake(fleet.node().address, client_context(ca.ca_file))
    assert new.version == "TLSv1.3" and new.status == 200


async def test_a_demo_node_serves_a_self_signed_localhost_certificate(make_fleet, tmp_path):
    fleet = await make_fleet(tls={"demo": True})
    pair = fleet.node().certificate.pair
    trusted = tmp_path / "demo.crt"
    trusted.write_text(pair.cert_pem)
    for name in ("localhost", "127.0.0.1"):
        shaken = await handshake(fleet.node().address, client_context(trusted), server_name=name)
        assert shaken.status == 200 and shaken.serial == pair.info()["serial"]
    assert (await fleet.client.get(f"{NODE}/tls/certificate")).json()["source"] == "demo"


# -- the defences on TLS traffic ------------------------------------------------------------
async def test_an_h2_client_is_counted_per_request_not_per_connection(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued), flood_rps=5)
    statuses = []
    async with https_client(ca.ca_file, source="127.0.0.41") as client:
        for _ in range(12):  # one connection, twelve streams
            answer = await client.get(url(fleet))
            assert answer.http_version == "HTTP/2"
            statuses.append(answer.status_code)
    assert statuses[:5] == [200] * 5 and 429 in statuses
    table = {e.key: e for e in parse_table(await fleet.node().proc.command(f"show table {FRONTEND}"))}
    assert table["::ffff:127.0.0.41"].get("gpt0") == 1  # flagged as a flood from one connection's streams


async def test_the_waf_rate_limits_and_bans_hold_on_tls_traffic(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued), rate_limit_rps=3)
    async with https_client(ca.ca_file, source="127.0.0.42") as client:
        assert (await client.get(url(fleet, "/?q=<script>alert(1)</script>"))).status_code == 403
    async with https_client(ca.ca_file, source="127.0.0.43") as client:
        statuses = [(await client.get(url(fleet))).status_code for _ in range(6)]
    assert statuses[:3] == [200] * 3 and 429 in statuses
    ban = await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.44", "duration_seconds": 600})
    assert ban.status_code == 201
    refused = await handshake(fleet.node().address, client_context(ca.ca_file), source="127.0.0.44")
    assert refused.serial is None and refused.status == 0
    assert (await handshake(fleet.node().address, client_context(ca.ca_file), source="127.0.0.45")).status == 200


async def test_behind_a_proxy_protocol_balancer_the_header_address_is_the_tls_client(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued), accept_proxy=True)
    address, ctx = fleet.node().address, client_context(ca.ca_file)
    await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.46", "duration_seconds": 600})
    assert (await handshake(address, ctx, source="127.0.0.80", prefix=proxy_v1("127.0.0.46"))).status == 0
    assert (await handshake(address, ctx, source="127.0.0.80", prefix=proxy_v1("127.0.0.47"))).status == 200
    tracked = {e.key for e in parse_table(await fleet.node().proc.command(f"show table {FRONTEND}"))}
    assert "::ffff:127.0.0.47" in tracked and "::ffff:127.0.0.80" not in tracked


# -- HTTPS origins ---------------------------------------------------------------------------
@pytest.fixture
def https_origin(tmp_path: Path) -> Any:
    origin_ca = CertificateAuthority(tmp_path / "origin-ca", "origin CA")
    served = origin_ca.signed(["origin.test"], "origin")
    with static_origin(f"ssl crt {served.combined}") as address:
        yield address, origin_ca


@contextlib.asynccontextmanager
async def fleet_before(origin: str, **node: Any) -> AsyncIterator[Fleet]:
    """A fleet whose nodes protect `origin` (the HTTPS one of the test)."""
    fleet = Fleet(fleet_settings(origin, **node))
    try:
        await fleet.handle.ensure_started.remote()
        yield fleet
    finally:
        await fleet.close()


async def plain_get(fleet: Fleet) -> int:
    async with httpx.AsyncClient(trust_env=False, timeout=5.0) as client:
        return (await client.get(f"http://{fleet.node().address}/")).status_code


async def test_an_https_origin_is_verified_against_its_own_ca(https_origin):
    address, origin_ca = https_origin
    async with fleet_before(address, origin_tls={"ca_file": str(origin_ca.ca_file), "sni": "origin.test"}) as fleet:
        assert await plain_get(fleet) == 200


@pytest.mark.parametrize("wrong", ["ca", "sni"])
async def test_an_origin_failing_verification_is_a_503_not_a_silent_pass(https_origin, tmp_path, wrong):
    address, origin_ca = https_origin
    other = CertificateAuthority(tmp_path / "other-ca", "other CA")
    ca_file = other.ca_file if wrong == "ca" else origin_ca.ca_file
    sni = "origin.test" if wrong == "ca" else "elsewhere.test"
    async with fleet_before(address, origin_tls={"ca_file": str(ca_file), "sni": sni}) as fleet:
        assert await plain_get(fleet) == 503


# -- hot replacement -----------------------------------------------------------------------
async def _serials_while(
    address: str, ctx: ssl.SSLContext, done: asyncio.Event, seen: list[tuple[str | None, int]]
) -> None:
    """New connections one after another, each's (serial, status) into `seen`, until `done` (then five
    more; at most 2000)."""
    after = 0
    while len(seen) < 2000 and after < 5:
        after += done.is_set()
        shaken = await handshake(address, ctx)
        seen.append((shaken.serial, shaken.status))


async def test_a_certificate_is_replaced_without_reload_or_a_failed_request(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued))
    node, ctx = fleet.node(), client_context(ca.ca_file)
    worker = await node.proc.current_worker()
    fresh = ca.signed(HOSTS)
    async with https_client(ca.ca_file) as kept_open:
        assert (await kept_open.get(url(fleet))).status_code == 200  # an h2 connection opened before
        done, seen = asyncio.Event(), list[tuple[str | None, int]]()
        watcher = asyncio.create_task(_serials_while(node.address, ctx, done, seen))
        await eventually(lambda: len(seen) >= 3, what="requests under way before the swap")
        answer = await fleet.client.put(
            f"{NODE}/tls/certificate", json={"cert_pem": fresh.pair.cert_pem, "key_pem": fresh.pair.key_pem}
        )
        done.set()
        await watcher
        assert answer.status_code == 200 and answer.json()["serial"] == fresh.serial
        assert answer.json()["source"] == "api"
        assert (await kept_open.get(url(fleet))).status_code == 200  # the open connection carries on
    assert [s for s in seen if s[1] != 200] == []
    serials = [serial for serial, _ in seen]
    assert serials[0] == issued.serial and serials[-5:] == [fresh.serial] * 5
    assert set(serials) == {issued.serial, fresh.serial}
    assert await node.proc.current_worker() == worker  # no reload
    assert node.paths.certificate.read_text() == fresh.pair.combined


async def test_a_replaced_certificate_survives_a_node_restart(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued))
    fresh = ca.signed(HOSTS)
    body = {"cert_pem": fresh.pair.cert_pem, "key_pem": fresh.pair.key_pem}
    assert (await fleet.client.put(f"{NODE}/tls/certificate", json=body)).status_code == 200
    old, address = fleet.node(), fleet.node().address
    await crash(fleet)

    def replaced() -> bool:
        entry = fleet.fleet.nodes["node-1"]
        return isinstance(entry.handle, LocalActorHandle) and entry.status == "healthy"

    await eventually(replaced, timeout=20, what="the dead node replaced by the fleet's health check")
    assert fleet.node() is not old
    served = await handshake(address, client_context(ca.ca_file))
    assert served.serial == fresh.serial and served.status == 200


async def test_the_fleet_replaces_the_certificate_on_every_node(make_fleet, ca, issued):
    fleet = await make_fleet(tls=tls(issued), initial_nodes=2)
    fresh = ca.signed(HOSTS)
    body = {"cert_pem": fresh.pair.cert_pem, "key_pem": fresh.pair.key_pem}
    answer = await fleet.client.put("/api/v1/tls/certificate", json=body)
    assert answer.status_code == 200 and answer.json()["nodes"] == ["node-1", "node-2"]
    for node_id in ("node-1", "node-2"):
        served = await handshake(fleet.node(node_id).address, client_context(ca.ca_file))
        assert served.serial == fresh.serial


def test_the_configuration_refuses_h2_on_a_syn_node_and_unreadable_files(issued, tmp_path):
    env = {"MANAGEMENT_API_KEY": "9b2e4c6a8d0f1e3a5c7b9d1f3e5a7c9b0d2f4e6a8c1b3d5f"}
    syn = {
        **env,
        "MITIGATION__FLEET__NODE__MODE": "syn",
        "MITIGATION__FLEET__NODE__TLS": json.dumps(tls(issued, alpn=["h2"])),
    }
    with pytest.raises(ConfigError, match="h2 is HTTP"):
        load("config/mitigation.yaml", syn)
    gone = {**env, "MITIGATION__FLEET__NODE__TLS": json.dumps({"cert_file": str(tmp_path / "x"), "key_file": "y"})}
    with pytest.raises(ConfigError, match="cannot be read"):
        load("config/mitigation.yaml", gone)
    demo = load("config/mitigation.yaml", {**env, "MITIGATION__FLEET__NODE__TLS": '{"demo": true}'})
    assert demo.fleet.node.tls is not None and demo.fleet.node.tls.demo
    assert load("config/mitigation.yaml", env).fleet.node.tls is None  # the default stays plain HTTP


async def test_a_syn_node_terminates_tls_and_forwards_the_bytes(make_fleet, ca, issued):
    fleet = await make_fleet(mode="syn", tls=tls(issued))
    shaken = await handshake(fleet.node().address, client_context(ca.ca_file, alpn=["h2", "http/1.1"]))
    assert shaken.serial == issued.serial and shaken.alpn is None and shaken.status == 200
    assert "alpn" not in fleet.node().paths.config.read_text()


# -- TLS as a policy -------------------------------------------------------------------------
async def deploy_tls(fleet: Fleet, tls_settings: dict[str, Any] | None, **origin: Any) -> httpx.Response:
    rule = {"type": "tls", "tls": tls_settings, "origin_tls": origin or None}
    return await fleet.client.post("/api/v1/policy", json={"name": "tls", "rules": [rule]})


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"cert_file": "/nonexistent/site.crt"}, "cannot be read"),
        ({"min_version": "TLSv1.1"}, "TLSv1.2"),
        ({"alpn": ["h2", "spdy/3"]}, "'h2' or 'http/1.1'"),
        ({"demo": True}, "either demo"),
    ],
    ids=["missing-file", "min-version", "alpn", "two-sources"],
)
async def test_a_tls_policy_the_node_cannot_serve_is_422_and_the_node_stays_plain(fleet, issued, bad, said):
    answer = await deploy_tls(fleet, {**tls(issued), **bad})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "validation_error"
    assert said in answer.json()["error"]["message"]
    assert await plain_get(fleet) == 200 and fleet.node().settings.tls is None


async def test_a_tls_policy_whose_key_is_not_the_certificates_is_422(fleet, ca, issued):
    other = ca.signed(HOSTS)
    answer = await deploy_tls(fleet, {"cert_file": str(issued.cert_file), "key_file": str(other.key_file)})
    assert answer.status_code == 422 and "does not match" in answer.json()["error"]["message"]
    assert key_line(other) not in answer.text


async def test_h2_on_a_syn_node_is_422(make_fleet, issued):
    fleet = await make_fleet(mode="syn")
    answer = await deploy_tls(fleet, tls(issued, alpn=["h2"]))
    assert answer.status_code == 422 and "h2 is HTTP" in answer.json()["error"]["message"]


async def test_a_tls_policy_turns_tls_on_hitlessly_and_removing_it_goes_back_to_plain(fleet, ca, issued):
    answer = await deploy_tls(fleet, tls(issued, min_version="TLSv1.3"))
    assert answer.status_code == 200, answer.text
    shaken = await handshake(fleet.node().address, client_context(ca.ca_file))
    assert shaken.serial == issued.serial and shaken.version == "TLSv1.3" and shaken.status == 200
    removed = await fleet.client.delete("/api/v1/policy/tls")
    assert removed.status_code == 200
    assert await plain_get(fleet) == 200
    assert (await fleet.client.delete("/api/v1/policy/tls")).status_code == 404
