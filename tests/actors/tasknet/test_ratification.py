"""A `ratified` event carries signatures of a majority of the validator set over (proposal,
Raft index, term); every reducer checks them, so one validator alone cannot ratify."""

from __future__ import annotations

import pytest

from actors.tasknet.ledger import Reject
from actors.tasknet.rules_governance import ratify_message
from tests.actors.tasknet.netsim import ManualClock, apply_and_attest, comparable, forge, make_network, sync

PERIOD_S = 60

clock = pytest.fixture(lambda: ManualClock(), name="clock")  # one wall clock for the network, moved by the test


@pytest.fixture()
def net(clock):
    return make_network(3, clock=clock, config={"proposal_voting_period": PERIOD_S})


def _pending(net, clock, value=0.1):
    params = {"key": "task_completion_tax", "value": value}
    _, prop = net[0].submit("proposal_create", {"title": "tax", "proposal_type": "config_change", "params": params})
    sync(net)
    for node in net:
        node.submit("vote", node.public_vote_payload(prop["id"], "yes"))
    sync(net)
    clock.advance(PERIOD_S)
    net[0].submit("proposal_close", {"proposal_id": prop["id"]})
    sync(net)
    assert net[1].state["channels"]["general"]["proposals"][prop["id"]]["status"] == "pending_ratification"
    return prop["id"]


def _ratified_by(author, pid, index, term, signers):
    message = ratify_message(pid, index, term)
    signatures = {s.node_id: s.identity.sign(message) for s in signers}
    payload = {"proposal_id": pid, "raft_index": index, "term": term, "signatures": signatures}
    return forge(author, "ratified", payload)


def test_one_validator_alone_cannot_ratify(net, clock):
    pid = _pending(net, clock)
    a = net[0]
    with pytest.raises(Reject, match="majority") as err:
        a.submit("ratified", {"proposal_id": pid, "raft_index": 7, "term": 1, "signatures": {}})
    assert err.value.status == 403
    alone = _ratified_by(a, pid, 7, 1, [a])
    for node in net[1:]:
        node.receive([alone])
        assert "majority" in node.reducer.outcomes[alone["id"]]
        assert node.state["config"]["task_completion_tax"] == 0.02
        assert node.state["last_ratified_index"] == 0


def test_signatures_over_another_index_or_term_or_by_non_validators_do_not_count(net, clock):
    pid = _pending(net, clock)
    a, b, _ = net
    outsider = make_network(1)[0]
    message = ratify_message(pid, 7, 1)
    signatures = {
        a.node_id: a.identity.sign(message),
        b.node_id: b.identity.sign(ratify_message(pid, 8, 1)),  # another index
        outsider.node_id: outsider.identity.sign(message),  # not a validator
    }
    with pytest.raises(Reject, match="majority"):
        a.submit("ratified", {"proposal_id": pid, "raft_index": 7, "term": 1, "signatures": signatures})
    signatures[b.node_id] = b.identity.sign(ratify_message(pid, 7, 2))  # another term
    with pytest.raises(Reject, match="majority"):
        a.submit("ratified", {"proposal_id": pid, "raft_index": 7, "term": 1, "signatures": signatures})


def test_a_majority_of_signatures_ratifies_everywhere(net, clock):
    pid = _pending(net, clock)
    a, b, _ = net
    event = _ratified_by(a, pid, 7, 1, [a, b])
    for node in net:
        node.receive([event])
        assert node.state["config"]["task_completion_tax"] == 0.1
        assert node.state["last_ratified_index"] == 7
    assert len({comparable(n.state) for n in net}) == 1


def _drive(net, rounds):
    """Tick every validator's Raft, deliver its messages and attestations, until `rounds` run out."""
    by_id = {n.node_id: n for n in net}
    for _ in range(rounds):
        for node in net:
            node.ensure_raft(seed=hash(node.node_id) % 1000).tick()
        for node in net:
            for msg in node.raft.take_messages():
                by_id[msg["to"]].raft.step(msg)
            apply_and_attest(node, net)
        sync(net)


def test_raft_commit_then_attestations_of_a_majority_ratify(net, clock):
    pid = _pending(net, clock)
    _drive(net, 40)
    leader = next(n for n in net if n.raft.role == "leader")
    assert leader.raft.propose({"proposal_id": pid, "channel": "general", "by": leader.node_id})
    _drive(net, 10)
    for node in net:
        prop = node.state["channels"]["general"]["proposals"][pid]
        assert prop["status"] == "executed" and node.state["config"]["task_completion_tax"] == 0.1
    record = net[0].state["ratified"][0]
    assert len(record["signers"]) >= 2
