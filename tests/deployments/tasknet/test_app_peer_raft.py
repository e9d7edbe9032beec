"""Raft, attestations and forwarded proposals over HTTP peering (`/peer/raft`, `/peer/attest`,
`/peer/propose`) through the app: a validator (n2's key, joined as a peer) steps n1's Raft and gets the
answer signed by n1; every way a peer could cheat (signing as another node, a replayed envelope, a
message for another node, a peer that is not a validator, one that never joined, malformed or oversize
messages) is refused in the `{detail}` shape and leaves n1's Raft where it was. A proposal forwarded to
the leader is refused as a local one is, and the leader's answer comes back signed."""

from __future__ import annotations

from typing import Any

import pytest

from actors.tasknet.canonical import canonical
from actors.tasknet.identity import Identity
from actors.tasknet.peering import (
    MAX_ATTESTATIONS,
    MAX_RAFT_ENTRIES,
    PENALTY_PER_INVALID,
    SCORE_START,
    envelope,
    open_envelope,
)
from actors.tasknet.raft import LEADER, RaftCore
from actors.tasknet.rules_governance import ratify_message
from tests.deployments.tasknet.conftest import Net
from tests.polling import eventually


class Peer:
    """A node speaking to the peer routes of `target` (n1 unless told) with `identity` (a validator's
    own key, or a stranger's)."""

    def __init__(self, net: Net, identity: Identity, target: str = "n1") -> None:
        self.net, self.identity, self.target = net, identity, target

    def signed(self, route: str, body: dict[str, Any], to: str | None = None) -> dict[str, Any]:
        core = _core(self.net, self.target)
        return envelope(self.identity, route, to or self.net.ids[self.target], body, core.now_ms())

    async def post(self, route: str, raw: dict[str, Any]) -> Any:
        return await self.net.req(self.target, "POST", f"/peer/{route}", auth=False, json=raw)

    async def join(self) -> None:
        response = await self.post("join", self.signed("join", {"url": None}))
        assert response.status_code == 200, response.text

    async def raft(self, message: dict[str, Any]) -> Any:
        return await self.post("raft", self.signed("raft", {"message": message}))


def _core(net: Net, node: str) -> Any:
    return net.app.state.component.network.handles[node]._instance.core


async def _raft(net: Net) -> RaftCore:
    async def running() -> bool:
        return _core(net, "n1").raft is not None and _core(net, "n1").raft.leader_id is not None

    await eventually(running, timeout=10, what="n1's Raft with a leader")
    raft: RaftCore = _core(net, "n1").raft
    return raft


def _vote(raft: RaftCore, sender: str, to: str, kind: str = "request_vote", jump: int = 100) -> dict[str, Any]:
    """A vote request that, if stepped, would move n1's term far ahead (`jump`)."""
    last = raft.last_index()
    return {
        "type": kind,
        "from": sender,
        "to": to,
        "term": raft.term + jump,
        "candidate_id": sender,
        "last_log_index": last,
        "last_log_term": raft.term_at(last),
    }


@pytest.fixture
async def validator(net: Net) -> Peer:
    """n2's key, joined to n1 as an HTTP peer (n2 is a genesis validator)."""
    peer = Peer(net, _core(net, "n2").identity)
    await peer.join()
    return peer


@pytest.fixture
async def stranger(net: Net) -> Peer:
    peer = Peer(net, Identity.generate())
    await peer.join()
    return peer


async def test_a_validator_peer_steps_raft_and_gets_the_answer_signed_by_the_node(net: Net, validator: Peer):
    raft = await _raft(net)
    n1, n2 = net.ids["n1"], net.ids["n2"]
    response = await validator.raft(_vote(raft, n2, n1, kind="pre_vote", jump=1))
    assert response.status_code == 200, response.text
    opened = open_envelope(response.json(), "raft_answer", n2, _core(net, "n1").now_ms())
    assert opened.sender == n1
    (answer,) = opened.body["messages"]
    assert answer["type"] == "pre_vote_response" and answer["from"] == n1 and answer["to"] == n2


async def test_a_message_signed_by_one_node_under_another_nodes_id_is_403_and_not_stepped(net: Net, stranger: Peer):
    raft = await _raft(net)
    term = raft.term
    as_n2 = _vote(raft, net.ids["n2"], net.ids["n1"])
    response = await stranger.raft(as_n2)  # the stranger's envelope, a message claiming n2
    assert response.status_code == 403 and response.json() == {
        "detail": "a Raft message must be from the node that signed it"
    }
    # the envelope itself claiming n2, signed with the stranger's key
    raw = stranger.signed("raft", {"message": as_n2})
    raw["from"] = net.ids["n2"]
    response = await stranger.post("raft", raw)
    assert response.status_code == 403 and "detail" in response.json()
    # a message naming n2 as candidate inside the stranger's own
    sneaky = {**_vote(raft, stranger.identity.node_id, net.ids["n1"]), "candidate_id": net.ids["n2"]}
    assert (await stranger.raft(sneaky)).status_code == 403
    assert raft.term < term + 100


async def test_a_replayed_raft_envelope_is_403_and_not_stepped(net: Net, validator: Peer):
    raft = await _raft(net)
    n1, n2 = net.ids["n1"], net.ids["n2"]
    raw = validator.signed("raft", {"message": _vote(raft, n2, n1, kind="pre_vote", jump=1)})
    assert (await validator.post("raft", raw)).status_code == 200
    response = await validator.post("raft", raw)
    assert response.status_code == 403 and response.json() == {"detail": "peer message replayed"}
    # the nonce once more, in an envelope n2 signed anew around a message that would move n1's term
    term = raft.term
    unsigned = {k: v for k, v in raw.items() if k != "sig"} | {"body": {"message": _vote(raft, n2, n1)}}
    again = {**unsigned, "sig": validator.identity.sign(canonical(unsigned))}
    response = await validator.post("raft", again)
    assert response.status_code == 403 and response.json() == {"detail": "peer message replayed"}
    assert raft.term < term + 100


async def test_a_raft_message_for_another_node_is_403_and_not_stepped(net: Net, validator: Peer):
    raft = await _raft(net)
    term = raft.term
    for_n3 = _vote(raft, net.ids["n2"], net.ids["n3"])
    response = await validator.raft(for_n3)  # the envelope is n1's, the message n3's
    assert response.status_code == 403 and response.json() == {
        "detail": "the Raft message is addressed to another node"
    }
    raw = validator.signed("raft", {"message": {**for_n3, "to": net.ids["n1"]}}, to=net.ids["n3"])
    response = await validator.post("raft", raw)  # the envelope is n3's
    assert response.status_code == 403 and response.json() == {"detail": "peer message is addressed to another node"}
    assert raft.term < term + 100


async def test_a_joined_peer_that_is_not_a_validator_is_403_and_not_stepped(net: Net, stranger: Peer):
    raft = await _raft(net)
    term = raft.term
    response = await stranger.raft(_vote(raft, stranger.identity.node_id, net.ids["n1"]))
    assert response.status_code == 403
    assert response.json() == {"detail": "the sender is not a validator in this node's Raft configuration"}
    assert raft.term < term + 100
    attestation = {"proposal_id": "p", "raft_index": 1, "term": 1, "signatures": {}}
    response = await stranger.post("attest", stranger.signed("attest", {"attestations": [attestation]}))
    assert response.status_code == 403 and response.json() == {"detail": "attestations must be sent by a validator"}


async def test_a_validator_key_that_never_joined_is_403(net: Net):
    raft = await _raft(net)
    term = raft.term
    unjoined = Peer(net, _core(net, "n3").identity)
    response = await unjoined.raft(_vote(raft, net.ids["n3"], net.ids["n1"]))
    assert response.status_code == 403 and "join first" in response.json()["detail"]
    assert raft.term < term + 100


@pytest.mark.parametrize(
    "change, status",
    [
        ({"type": "campaign"}, 400),
        ({"term": -1}, 400),
        ({"term": True}, 400),
        ({"extra": 1}, 400),
        ({"last_log_index": "1"}, 400),
    ],
)
async def test_malformed_raft_messages_are_400_and_cost_the_peer_its_score(
    net: Net, validator: Peer, change: dict[str, Any], status: int
):
    raft = await _raft(net)
    response = await validator.raft({**_vote(raft, net.ids["n2"], net.ids["n1"]), **change})
    assert response.status_code == status and "detail" in response.json()
    (record,) = (await net.ok("n1", "GET", "/peers"))["inbound"]
    assert record["score"] < SCORE_START


async def test_oversize_raft_messages_are_413(net: Net, validator: Peer):
    raft = await _raft(net)
    n1, n2 = net.ids["n1"], net.ids["n2"]
    entries = [{"term": 1, "data": {}}] * (MAX_RAFT_ENTRIES + 1)
    append = {
        "type": "append_entries",
        "from": n2,
        "to": n1,
        "term": raft.term,
        "leader_id": n2,
        "prev_log_index": 0,
        "prev_log_term": 0,
        "entries": entries,
        "leader_commit": 0,
    }
    response = await validator.raft(append)
    assert response.status_code == 413 and str(MAX_RAFT_ENTRIES) in response.json()["detail"]
    attestations = [{"proposal_id": "p", "raft_index": 1, "term": 1, "signatures": {}}] * (MAX_ATTESTATIONS + 1)
    response = await validator.post("attest", validator.signed("attest", {"attestations": attestations}))
    assert response.status_code == 413 and str(MAX_ATTESTATIONS) in response.json()["detail"]


async def test_a_validators_attestations_are_taken_and_a_forged_one_ratifies_nothing(net: Net, validator: Peer):
    attestation = {"proposal_id": "p", "raft_index": 1, "term": 1, "signatures": {net.ids["n2"]: "00" * 64}}
    raw = validator.signed("attest", {"attestations": [attestation]})
    response = await validator.post("attest", raw)
    assert response.status_code == 200 and response.json() == {"ratified": 0, "invalid": 1}
    assert (await validator.post("attest", raw)).json() == {"detail": "peer message replayed"}


def _attestation(signer: Identity, index: int, pid: str = "p") -> dict[str, Any]:
    """An attestation `signer` signed over (pid, index, term 1), for an entry not ratified yet."""
    signature = signer.sign(ratify_message(pid, index, 1))
    return {"proposal_id": pid, "raft_index": index, "term": 1, "signatures": {signer.node_id: signature}}


async def _score(net: Net) -> dict[str, Any]:
    (record,) = (await net.ok("n1", "GET", "/peers"))["inbound"]
    return dict(record)


async def test_attestations_that_fail_verification_cost_the_peer_score_and_repeated_abuse_drops_it(
    net: Net, validator: Peer
):
    n2 = _core(net, "n2").identity
    floor = _core(net, "n1").state["last_ratified_index"]
    honest = [_attestation(n2, floor + 1000 + i) for i in range(3)]  # good signatures, unknown proposal
    response = await validator.post("attest", validator.signed("attest", {"attestations": honest}))
    assert response.json() == {"ratified": 0, "invalid": 0} and (await _score(net))["score"] == SCORE_START
    forged = {**honest[0], "signatures": {n2.node_id: "00" * 64}}  # n2's id, a signature that fails
    stranger = Identity.generate()  # signed well, by a key this node has not heard of: left out, not held against
    unknown = _attestation(stranger, floor + 1001)
    other = {**honest[1], "raft_index": floor + 1002}  # n2's signature over another entry
    broken = {"proposal_id": "p", "raft_index": "x", "term": 1, "signatures": {}}
    batch = [forged, unknown, other, broken, *honest]
    response = await validator.post("attest", validator.signed("attest", {"attestations": batch}))
    assert response.status_code == 200 and response.json() == {"ratified": 0, "invalid": 3}
    record = await _score(net)
    assert record["score"] == SCORE_START - 3 * PENALTY_PER_INVALID and not record["dropped"]
    for _ in range(SCORE_START // PENALTY_PER_INVALID):
        response = await validator.post("attest", validator.signed("attest", {"attestations": [forged]}))
        if response.status_code != 200:
            break
    assert response.status_code == 403 and response.json() == {"detail": "peer dropped for relaying invalid events"}
    assert (await _score(net))["dropped"] is True
    response = await validator.raft(_vote(await _raft(net), n2.node_id, net.ids["n1"], kind="pre_vote", jump=1))
    assert response.status_code == 403  # dropped for every route, Raft too


# ----- proposals forwarded to the Raft leader (`/peer/propose`)


async def _leader(net: Net) -> str:
    """The node that leads the 3-node Raft."""
    found: list[str] = []

    async def elected() -> bool:
        found[:] = [
            n for n in ("n1", "n2", "n3") if _core(net, n).raft is not None and _core(net, n).raft.role == LEADER
        ]
        return len(found) == 1

    await eventually(elected, timeout=10, what="one Raft leader")
    return found[0]


async def _at_leader(net: Net, identity_of: str | None = None) -> tuple[str, Peer]:
    """The leader, and a joined peer speaking to it with another validator's key (or a stranger's)."""
    leader = await _leader(net)
    other = next(n for n in ("n1", "n2", "n3") if n != leader)
    identity = _core(net, other).identity if identity_of is None else Identity.generate()
    peer = Peer(net, identity, target=leader)
    await peer.join()
    return leader, peer


def _proposal(peer: Peer, pid: str = "p-1") -> dict[str, Any]:
    return {"data": {"proposal_id": pid, "channel": "general", "by": peer.identity.node_id}}


def _log_length(net: Net, node: str) -> int:
    raft: RaftCore = _core(net, node).raft
    return raft.last_index()


async def test_a_forwarded_proposal_the_leader_refuses_is_refused_as_a_local_one_and_signed(net: Net):
    leader, peer = await _at_leader(net)
    open_pid = (await net.ok("n1", "POST", "/proposals", json={"title": "t", "proposal_type": "generic"}))["id"]
    await net.settle(lambda: _has_proposal(net, leader, open_pid))
    local = _actor(net, leader)
    for pid in ("no-such-proposal", open_pid):  # unknown (404); still open for votes (409)
        data = _proposal(peer, pid)["data"]
        length = _log_length(net, leader)
        response = await peer.post("propose", peer.signed("propose", {"data": data}))
        assert response.status_code == 200, response.text
        opened = open_envelope(response.json(), "propose_answer", peer.identity.node_id, _core(net, leader).now_ms())
        assert opened.sender == net.ids[leader]
        assert opened.body == {"answer": await local.raft_propose(data)}
        assert opened.body["answer"]["status"] in (404, 409) and _log_length(net, leader) == length


async def test_a_forwarded_proposal_from_a_peer_that_is_not_a_validator_is_403(net: Net):
    leader, stranger = await _at_leader(net, identity_of="stranger")
    length = _log_length(net, leader)
    response = await stranger.post("propose", stranger.signed("propose", _proposal(stranger)))
    assert response.status_code == 403 and response.json() == {"detail": "proposals must be forwarded by a validator"}
    assert _log_length(net, leader) == length


async def test_a_forwarded_proposal_signed_under_another_nodes_id_is_403(net: Net):
    leader, stranger = await _at_leader(net, identity_of="stranger")
    validator = next(n for n in ("n1", "n2", "n3") if n != leader)
    as_validator = {"data": {**_proposal(stranger)["data"], "by": net.ids[validator]}}
    response = await stranger.post("propose", stranger.signed("propose", as_validator))
    assert response.status_code == 403
    assert response.json() == {"detail": "a forwarded proposal must be by the node that signed it"}
    raw = stranger.signed("propose", as_validator)
    raw["from"] = net.ids[validator]  # the envelope claims the validator, signed with the stranger's key
    response = await stranger.post("propose", raw)
    assert response.status_code == 403 and response.json() == {"detail": "peer id does not derive from its key"}


async def test_a_replayed_forwarded_proposal_is_403(net: Net):
    _, peer = await _at_leader(net)
    raw = peer.signed("propose", _proposal(peer, "no-such-proposal"))
    assert (await peer.post("propose", raw)).status_code == 200
    response = await peer.post("propose", raw)
    assert response.status_code == 403 and response.json() == {"detail": "peer message replayed"}


async def test_a_proposal_forwarded_to_a_follower_is_503_and_malformed_ones_400_cost_score(net: Net):
    leader = await _leader(net)
    follower, other = (n for n in ("n1", "n2", "n3") if n != leader)
    peer = Peer(net, _core(net, other).identity, target=follower)
    await peer.join()
    response = await peer.post("propose", peer.signed("propose", _proposal(peer)))
    assert response.status_code == 503 and response.json() == {
        "detail": "this node is not the Raft leader; retry shortly"
    }
    for body in ({"data": {"proposal_id": "p"}}, {"data": {**_proposal(peer)["data"], "channel": 7}}, {"x": 1}):
        response = await peer.post("propose", peer.signed("propose", body))
        assert response.status_code == 400 and "detail" in response.json()
    (record,) = (await net.ok(follower, "GET", "/peers"))["inbound"]
    assert record["score"] == SCORE_START - 3 * PENALTY_PER_INVALID


def _actor(net: Net, node: str) -> Any:
    return net.app.state.component.network.handles[node]._instance


async def _has_proposal(net: Net, node: str, pid: str) -> bool:
    return pid in _core(net, node).state["proposal_index"]
