"""Input bounds: chunked bodies are capped like declared ones, an oversized event or a broken
upgrade package is a 4xx (never a 500, never an upgrade stuck in "testing"), and the agent
finds the LLM gateway on the port the fleet really runs on."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile

import pytest

from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.upgrades import Upgrades
from deployments.tasknet.config import TasknetConfig, load
from tests.actors.tasknet.netsim import make_network
from tests.deployments.tasknet.conftest import Net

MB = 1 << 20


def corrupt_zip() -> bytes:
    """A zip whose central directory is fine but whose deflated member fails its CRC."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("m.py", "def f():\n    return 1\n" * 40)
        zf.writestr("test_m.py", "import unittest\n")
    raw = bytearray(buf.getvalue())
    start = 30 + len("m.py")  # first member's data, after its local header
    for i in range(start, start + 8):
        raw[i] ^= 0xFF
    return bytes(raw)


def unsupported_method_zip() -> bytes:
    """A zip whose member claims a compression method nobody implements (99 is AES)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("m.py", "x = 1\n")
    raw = bytearray(buf.getvalue())
    raw[8:10] = (99).to_bytes(2, "little")  # local header
    central = raw.find(b"PK\x01\x02")
    raw[central + 10 : central + 12] = (99).to_bytes(2, "little")
    return bytes(raw)


async def test_a_chunked_body_over_the_cap_is_refused_413_before_it_is_parsed(net: Net):
    sent = []

    async def chunks():
        for _ in range(20):
            sent.append(MB)
            yield b"[" + b"1," * (MB // 2 - 1) + b"1]"

    # a public route (signed Raft message: no token needed) and a token route
    for path, auth in (("/raft/request_vote", False), ("/tasks", True)):
        sent.clear()
        r = await net.req("n1", "POST", path, auth=auth, content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413, r.text
        assert "larger than" in r.json()["detail"]
        assert len(sent) < 20  # refused while streaming, not after reading it all


async def test_a_declared_length_over_the_cap_is_refused_413(net: Net):
    r = await net.req("n1", "POST", "/tasks", content=b"{" + b" " * 300_000 + b"}")
    assert r.status_code == 413


async def test_a_proposal_whose_event_exceeds_64_kib_is_a_4xx(net: Net):
    body = {"title": "big", "proposal_type": "generic", "params": {"blob": "x" * 70_000}}
    r = await net.req("n1", "POST", "/proposals", json=body)
    assert r.status_code == 413 and "64 KiB" in r.json()["detail"]
    state = await net.ok("n1", "GET", "/state")
    assert not state["general"]["proposals"] and state["global"]["events_rejected"] == 0  # nothing half-written


@pytest.mark.parametrize("make", [corrupt_zip, unsupported_method_zip])
async def test_a_malformed_upgrade_zip_is_refused_when_proposed(net: Net, make):
    r = await net.req(
        "n1", "POST", "/upgrades/propose", json={"version": "9", "package_b64": base64.b64encode(make()).decode()}
    )
    assert r.status_code == 400, r.text
    assert "package" in r.json()["detail"]


@pytest.mark.parametrize("make", [corrupt_zip, unsupported_method_zip])
async def test_a_malformed_zip_from_the_network_fails_its_test_and_does_not_stay_testing(tmp_path, make):
    core: NodeCore = make_network(1)[0]
    package = make()

    params = {
        "version": "9",
        "package_hash": hashlib.sha256(package).hexdigest(),
        "package_b64": base64.b64encode(package).decode(),
    }
    _, prop = core.submit("proposal_create", {"title": "up", "proposal_type": "code_upgrade", "params": params})
    upgrades = Upgrades(core, {})
    with pytest.raises(Reject) as err:
        await upgrades.test(prop["id"])
    assert 400 <= err.value.status < 500
    assert upgrades.tests[prop["id"]]["status"] == "test_failed"
    assert (await upgrades.status())["active_upgrades"][0]["status"] == "test_failed"


def test_the_agent_reaches_the_gateway_on_the_port_the_fleet_runs_on(monkeypatch):
    monkeypatch.setenv("RAYFLEET_HOST", "0.0.0.0")
    monkeypatch.setenv("RAYFLEET_PORT", "8123")
    for config in (TasknetConfig(), load("config/tasknet.yaml")):
        assert config.actor_settings()["llm"]["base_url"] == "http://127.0.0.1:8123/llm/v1"
    explicit = TasknetConfig.model_validate({"llm": {"base_url": "http://10.1.2.3:9/v1"}})
    assert explicit.actor_settings()["llm"]["base_url"] == "http://10.1.2.3:9/v1"
    off = TasknetConfig.model_validate({"llm": {"base_url": None}})
    assert off.actor_settings()["llm"]["base_url"] is None
