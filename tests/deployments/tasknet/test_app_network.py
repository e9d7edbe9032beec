"""Identity and statistics routes, signed Raft messages over HTTP, signalling and WebRTC data channels."""

from __future__ import annotations

import pytest

from actors.tasknet.canonical import canonical
from actors.tasknet.identity import Identity
from tests.deployments.tasknet.conftest import Net, make_config, open_net


async def test_state_channels_and_stats(net: Net):
    state = await net.ok("n1", "GET", "/state")
    assert set(state["global"]["nodes"]) == set(net.ids.values())
    node = state["global"]["nodes"][net.ids["n1"]]
    assert set(node) >= {"id", "public_key", "reputation", "balance"} and node["reputation"]["_total"] == 0
    assert state["global"]["immune_system"]["enabled"] is True
    assert state["general"]["treasury_balance"] == 0 and sorted(state["general"]["participants"]) == sorted(
        net.ids.values()
    )
    assert await net.ok("n1", "GET", "/channels") == ["general"]
    stats = await net.ok("n2", "GET", "/network/stats")
    assert stats["total_peers"] == 2 and stats["messages_received"] > 0 and stats["uptime_seconds"] >= 0
    pubsub = await net.ok("n2", "GET", "/pubsub/stats")
    assert pubsub["total_messages"] >= 4 and pubsub["subscribed_channels"] == ["general"]
    health = await net.ok("n3", "GET", "/health")
    assert health["status"] == "ok" and health["node_id"] == net.ids["n3"]


async def test_raft_http_accepts_a_validator_signed_message_and_answers_per_spec(net: Net, tmp_path):
    n2 = net.app.state.component.network.handles["n2"]._instance
    body = {"term": 1_000, "candidate_id": net.ids["n2"], "last_log_index": 10_000, "last_log_term": 999}
    signed = {**body, "signature": n2.core.identity.sign(canonical(body))}
    reply = await net.ok("n1", "POST", "/raft/request_vote", json=signed)
    assert reply == {"term": 1000, "vote_granted": True}
    stale = {**body, "term": 1}
    reply = await net.ok(
        "n1", "POST", "/raft/request_vote", json={**stale, "signature": n2.core.identity.sign(canonical(stale))}
    )
    assert reply == {"term": 1000, "vote_granted": False}
    outsider = Identity.generate()
    fake = {**body, "candidate_id": outsider.node_id}
    r = await net.req("n1", "POST", "/raft/request_vote", json={**fake, "signature": outsider.sign(canonical(fake))})
    assert r.status_code == 403
    append = {
        "term": 1000,
        "leader_id": net.ids["n2"],
        "prev_log_index": 0,
        "prev_log_term": 0,
        "entries": [],
        "leader_commit": 0,
    }
    reply = await net.ok(
        "n1", "POST", "/raft/append_entries", json={**append, "signature": n2.core.identity.sign(canonical(append))}
    )
    assert reply == {"term": 1000, "success": True}


async def test_handshake_checks_the_key(net: Net):
    stranger = Identity.generate()
    out = await net.ok(
        "n1", "POST", "/bootstrap/handshake", json={"node_id": stranger.node_id, "public_key": stranger.public_key}
    )
    assert sorted(out["peers"]) == sorted(net.ids.values())
    r = await net.req(
        "n1", "POST", "/bootstrap/handshake", json={"node_id": "tn" + "0" * 32, "public_key": stranger.public_key}
    )
    assert r.status_code == 403


async def test_unsigned_signals_are_refused(net: Net):
    r = await net.req(
        "n2",
        "POST",
        "/p2p/signal/receive",
        json={"from_peer_id": net.ids["n1"], "signal_data": {"type": "offer", "sdp": "v=0"}},
    )
    assert r.status_code in (403, 503)
    r = await net.req(
        "n1", "POST", "/p2p/signal/relay", auth=False, json={"target_peer_id": net.ids["n2"], "signal_data": {}}
    )
    assert r.status_code == 401


@pytest.fixture
async def rtc_net(tmp_path, monkeypatch):
    async for n in open_net(monkeypatch, make_config(tmp_path, webrtc={"enabled": True})):
        yield n


async def test_webrtc_data_channels_carry_gossip(rtc_net: Net):
    net = rtc_net

    async def all_open() -> bool:
        conns = (await net.ok("n1", "GET", "/webrtc/connections"))["connections"]
        conns += (await net.ok("n2", "GET", "/webrtc/connections"))["connections"]
        conns += (await net.ok("n3", "GET", "/webrtc/connections"))["connections"]
        return len(conns) == 6 and all(c["data_channel_state"] == "open" and c["state"] == "connected" for c in conns)

    await net.settle(all_open, timeout=30)
    metrics = (await net.ok("n1", "GET", "/webrtc/ice-metrics"))["metrics"]
    assert len(metrics) == 2
    for m in metrics:
        assert m["selected_pair"]["local"].startswith("host 127.0.0.1:")
        assert m["candidate_pairs"] and m["selected_pair"]["remote"].startswith("host 127.0.0.1:")
    task = await net.ok("n1", "POST", "/tasks", json={"title": "over webrtc", "reward": 1})

    async def arrived() -> bool:
        return task["id"] in str((await net.ok("n3", "GET", "/state"))["general"]["tasks"])

    await net.settle(arrived)
    conns = (await net.ok("n1", "GET", "/webrtc/connections"))["connections"]
    assert sum(c["messages_sent"] for c in conns) >= 2


async def test_a_body_over_max_body_bytes_is_refused_413_declared_or_chunked(net: Net):
    limit = net.app.state.component.config.max_body_bytes

    async def chunks():
        for _ in range(limit // 4096 + 2):
            yield b"x" * 4096

    declared = await net.req("n1", "POST", "/tasks", content=b"{" + b" " * limit + b"}")
    chunked = await net.req("n1", "POST", "/tasks", content=chunks())
    for r in (declared, chunked):
        assert r.status_code == 413
        assert r.json() == {"detail": f"the request body is larger than the limit of {limit} bytes"}


def _offer(stranger: Identity, to: str, sdp: str) -> dict:
    from actors.tasknet.canonical import canonical

    body = {"from": stranger.node_id, "to": to, "type": "offer", "sdp": sdp}
    return {"from_peer_id": stranger.node_id, "signal_data": {**body, "signature": stranger.sign(canonical(body))}}


async def test_a_self_signed_offer_with_garbage_sdp_is_refused_and_leaves_no_connection(tmp_path, monkeypatch):
    async for net in open_net(
        monkeypatch, make_config(tmp_path, webrtc={"enabled": True, "host_addresses": ["127.0.0.1"]})
    ):
        stranger = Identity.generate()
        hello = {"node_id": stranger.node_id, "public_key": stranger.public_key}
        await net.ok("n1", "POST", "/bootstrap/handshake", json=hello)
        for sdp in ("v=0\r\nthis is not a session description\r\n", "x" * 5000, ""):
            r = await net.req(
                "n1", "POST", "/p2p/signal/receive", auth=False, json=_offer(stranger, net.ids["n1"], sdp)
            )
            assert r.status_code == 400, r.text
        conns = (await net.ok("n1", "GET", "/webrtc/connections"))["connections"]
        assert stranger.node_id not in {c["peer_id"] for c in conns}


async def test_the_handshake_registry_is_bounded(net: Net):
    for _ in range(300):
        stranger = Identity.generate()
        hello = {"node_id": stranger.node_id, "public_key": stranger.public_key}
        await net.ok("n1", "POST", "/bootstrap/handshake", json=hello)
    peers = (await net.ok("n1", "POST", "/bootstrap/handshake", json=hello))["peers"]
    assert len(peers) <= 256 + len(net.ids)


async def test_attestations_over_http_need_a_validator_envelope_and_a_majority_of_signatures(net: Net):
    """POST /raft/attest: the envelope signed by a validator (one check before any other work); the
    attestations' own signatures decide, so one validator alone ratifies nothing and a majority does."""
    from actors.tasknet.rules_governance import ratify_message
    from tests.deployments.tasknet.test_app_governance import propose

    cores = {n: net.app.state.component.network.handles[n]._instance.core for n in ("n1", "n2", "n3")}
    body = {"title": "tax", "proposal_type": "config_change", "params": {"key": "task_completion_tax", "value": 0.04}}
    pid = await propose(net, body)
    for node in ("n1", "n2"):

        async def voted(node: str = node) -> bool:
            return (await net.req(node, "POST", f"/proposals/{pid}/vote", json={"vote": "yes"})).status_code == 200

        await net.settle(voted)
    await net.close("n1", pid)
    index, term = 7, 1
    message = ratify_message(pid, index, term)

    def envelope(sender: str, signers: list[str], key=None) -> dict:
        att = {"proposal_id": pid, "raft_index": index, "term": term, "channel": "general", "by": net.ids[sender]}
        att["signatures"] = {net.ids[s]: cores[s].identity.sign(message) for s in signers}
        unsigned = {"sender": net.ids[sender], "attestations": [att]}
        return {**unsigned, "signature": (key or cores[sender].identity).sign(canonical(unsigned))}

    outsider = Identity.generate()
    assert (await net.req("n1", "POST", "/raft/attest", json=envelope("n2", ["n2", "n3"], outsider))).status_code == 403
    stranger = {**envelope("n2", ["n2", "n3"]), "sender": outsider.node_id}
    assert (await net.req("n1", "POST", "/raft/attest", json=stranger)).status_code == 403
    unsigned = {k: v for k, v in envelope("n2", ["n2"]).items() if k != "signature"}
    assert (await net.req("n1", "POST", "/raft/attest", json=unsigned)).status_code == 403
    bad = envelope("n2", ["n2"])
    bad["attestations"][0]["raft_index"] = 0
    assert (await net.req("n1", "POST", "/raft/attest", json=bad)).status_code == 400

    alone = await net.ok("n1", "POST", "/raft/attest", json=envelope("n2", ["n2"]))
    assert alone == {"ratified": 0}
    details = await net.ok("n1", "GET", f"/proposals/{pid}/details")
    assert details["status"] == "pending_ratification"
    forged = envelope("n2", ["n2"])  # n3's signature made with n2's key does not count for n3
    forged["attestations"][0]["signatures"][net.ids["n3"]] = cores["n2"].identity.sign(message)
    unsigned = {k: v for k, v in forged.items() if k != "signature"}
    forged["signature"] = cores["n2"].identity.sign(canonical(unsigned))
    assert await net.ok("n1", "POST", "/raft/attest", json=forged) == {"ratified": 0}

    majority = await net.ok("n1", "POST", "/raft/attest", json=envelope("n3", ["n3"]))  # n2's is held already
    assert majority == {"ratified": 1}

    async def executed_everywhere() -> bool:
        configs = [await net.ok(n, "GET", "/config") for n in ("n1", "n2", "n3")]
        return all(c["task_completion_tax"] == 0.04 for c in configs)

    await net.settle(executed_everywhere)
