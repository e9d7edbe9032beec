"""Governance nobody can game alone: one identity one vote (public or anonymous), a quorum and
a voting period that bind everyone, withdrawal instead of an early close, and anonymity sets
large enough to hide in."""

from __future__ import annotations

import pytest

from actors.tasknet.events import make_anonymous
from actors.tasknet.ledger import DEFAULT_CONFIG, Reject
from tests.actors.tasknet.netsim import ManualClock, comparable, forge, make_network, sync

PERIOD_S = 120

clock = pytest.fixture(lambda: ManualClock(), name="clock")  # one wall clock for the network, moved by the test


@pytest.fixture()
def net(clock):
    return make_network(5, clock=clock, config={"proposal_voting_period": PERIOD_S})


def _propose(net, title="p"):
    _, prop = net[0].submit("proposal_create", {"title": title})
    sync(net)
    return prop["id"]


def _vote(node, pid, value="yes"):
    return node.submit("vote", node.public_vote_payload(pid, value))


def _anon(node, pid, value="yes"):
    return node.submit_anonymous(pid, value, node.anonymous_proof(pid, value), "general")


def test_the_quorum_and_the_anonymity_floor_are_config_items_with_defaults(net):
    config = net[0].state["config"]
    assert config["proposal_quorum"] == DEFAULT_CONFIG["proposal_quorum"] == 0.5
    assert config["min_anonymity_set"] == DEFAULT_CONFIG["min_anonymity_set"] == 3
    assert config["proposal_voting_period"] == PERIOD_S


def test_a_public_voter_cannot_vote_again_anonymously(net):
    pid = _propose(net)
    _vote(net[1], pid)
    with pytest.raises(Reject, match="already voted"):
        _anon(net[1], pid, "no")


def test_an_anonymous_voter_cannot_vote_again_publicly(net):
    pid = _propose(net)
    _anon(net[1], pid)
    with pytest.raises(Reject, match="already voted"):
        _vote(net[1], pid, "no")


def test_every_reducer_refuses_the_second_vote_of_either_kind(net):
    pid = _propose(net)
    _anon(net[2], pid, "no")
    sync(net)
    forged = forge(net[2], "vote", net[2].public_vote_payload(pid, "yes"))
    for node in net:
        node.receive([forged])
        assert "already voted" in node.reducer.outcomes[forged["id"]]
    sync(net)
    prop = net[0].state["channels"]["general"]["proposals"][pid]
    assert prop["votes"] == {} and len(prop["anonymous_votes"]) == 1
    assert len({comparable(n.state) for n in net}) == 1


def test_a_public_vote_must_prove_its_key_image(net):
    pid = _propose(net)
    with pytest.raises(Reject):
        net[1].submit("vote", {"proposal_id": pid, "vote": "yes"})
    # another node's proof does not vouch for this author (the image is not its own)
    borrowed = net[2].public_vote_payload(pid, "yes")
    with pytest.raises(Reject, match="key image"):
        net[1].submit("vote", borrowed)
    # nor does a proof made for the other answer
    with pytest.raises(Reject, match="key image"):
        net[1].submit("vote", {**net[1].public_vote_payload(pid, "no"), "vote": "yes"})


def test_the_proposer_cannot_close_before_the_voting_period_ends(net, clock):
    pid = _propose(net)
    _vote(net[0], pid)
    for node in (net[0], net[1]):
        with pytest.raises(Reject, match="voting period") as err:
            node.submit("proposal_close", {"proposal_id": pid})
        assert err.value.status == 403
    for node in net[1:4]:
        _vote(node, pid)
    sync(net)
    clock.advance(PERIOD_S)
    _, closed = net[4].submit("proposal_close", {"proposal_id": pid})
    assert closed["result"] == "approved" and closed["quorum_reached"] is True


def test_without_quorum_a_proposal_is_rejected_whatever_the_yes_share(net, clock):
    pid = _propose(net)
    _vote(net[0], pid)
    _vote(net[1], pid)
    sync(net)
    clock.advance(PERIOD_S)
    _, closed = net[0].submit("proposal_close", {"proposal_id": pid})
    assert closed["yes_votes"] == 2.0 and closed["no_votes"] == 0
    assert closed["quorum_reached"] is False and closed["result"] == "rejected"
    assert closed["turnout"] == pytest.approx(0.4)


def test_a_forged_early_close_is_refused_by_every_reducer(net):
    pid = _propose(net)
    _vote(net[0], pid)
    sync(net)
    forged = forge(net[0], "proposal_close", {"proposal_id": pid})
    for node in net[1:]:
        node.receive([forged])
        assert "voting period" in node.reducer.outcomes[forged["id"]]
        assert node.state["channels"]["general"]["proposals"][pid]["status"] == "open"


def test_the_proposer_may_withdraw_an_open_proposal_and_nobody_else(net, clock):
    pid = _propose(net)
    _vote(net[1], pid)
    with pytest.raises(Reject) as err:
        net[1].submit("proposal_withdraw", {"proposal_id": pid})
    assert err.value.status == 403
    net[0].submit("proposal_withdraw", {"proposal_id": pid})
    sync(net)
    for node in net:
        assert node.state["channels"]["general"]["proposals"][pid]["status"] == "withdrawn"
    with pytest.raises(Reject, match="withdrawn"):
        _vote(net[2], pid)
    clock.advance(PERIOD_S)
    with pytest.raises(Reject, match="withdrawn"):
        net[0].submit("proposal_close", {"proposal_id": pid})


def test_anonymous_votes_need_a_ring_of_min_anonymity_set_members(clock):
    net = make_network(3, clock=clock, config={"min_anonymity_set": 4})
    pid = _propose(net)
    with pytest.raises(Reject, match="anonymity set") as err:
        _anon(net[1], pid)
    assert err.value.status == 403
    # a ring forged by a dishonest node is refused by every reducer as well
    _, prop = net[0].submit("proposal_create", {"title": "q"})
    sync(net)
    proof = net[1].anonymous_proof(prop["id"], "yes")
    event = make_anonymous(
        net[1].clock.tick(), "general", "anon_vote", {"proposal_id": prop["id"], "vote": "yes", "zkp_proof": proof}
    )
    net[2].receive([event])
    assert "anonymity set" in net[2].reducer.outcomes[event["id"]]


def test_votes_after_the_voting_period_do_not_count(net, clock):
    pid = _propose(net)
    clock.advance(PERIOD_S)
    with pytest.raises(Reject, match="voting period is over"):
        _vote(net[1], pid)
    with pytest.raises(Reject, match="voting period is over"):
        _anon(net[2], pid)
