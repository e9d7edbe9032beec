"""Validator set changes: a `validator_change` proposal adds or removes one validator; once
governance approved it (quorum, voting period, and yes votes of a majority of the validators in
force) and Raft committed it, the `ratified` event is checked against the set in force at its Raft
index, which the reduced state keeps as a history. Attacks first: each failed before the change."""

from __future__ import annotations

import copy

import pytest

from actors.tasknet import checkpoint as cp
from actors.tasknet.canonical import digest
from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.rules_governance import ratify_message
from tests.actors.tasknet.netsim import ManualClock, apply_and_attest, checkpoint_round, comparable, make_network, sync
from tests.actors.tasknet.test_ratification import _ratified_by

PERIOD_S = 60

clock = pytest.fixture(lambda: ManualClock(), name="clock")


@pytest.fixture()
def net(clock):
    """Six nodes; n1..n3 are the genesis validators, n4..n6 are not."""
    return make_network(6, clock=clock, config={"proposal_voting_period": PERIOD_S}, validators=3)


def change(node, action="add"):
    return {"action": action, "node_id": node.node_id, "public_key": node.identity.public_key}


def decide(net, clock, params, voters, kind="validator_change", proposer=None):
    """A proposal by `proposer` (n1), yes votes of `voters`, closed after its period: (id, status)."""
    body = {"title": "change", "proposal_type": kind, "params": params}
    _, prop = (proposer or net[0]).submit("proposal_create", body)
    sync(net)
    for node in voters:
        node.submit("vote", node.public_vote_payload(prop["id"], "yes"))
    sync(net)
    clock.advance(PERIOD_S + 1)
    net[0].submit("proposal_close", {"proposal_id": prop["id"]})
    sync(net)
    clock.advance(0.01)  # what is forged next is stamped after the close
    return prop["id"], net[1].state["channels"]["general"]["proposals"][prop["id"]]["status"]


def validators(node):
    return sorted(node.state["config"]["validator_set"])


def ids(nodes):
    return sorted(n.node_id for n in nodes)


def refused_everywhere(net, event, reason):
    for node in net:
        node.receive([event])
        assert reason in str(node.reducer.outcomes[event["id"]])


def test_a_node_cannot_add_itself(net, clock):
    n4 = net[3]
    pid, status = decide(net, clock, change(n4), [n4], proposer=n4)
    assert status == "rejected"
    refused_everywhere(net, _ratified_by(n4, pid, 5, 1, [n4]), "only validators")
    refused_everywhere(net, _ratified_by(net[0], pid, 5, 1, [net[0], n4]), "majority")
    assert all(validators(n) == ids(net[:3]) for n in net)


def test_a_validator_cannot_add_a_sybil_even_with_the_votes_of_more_sybils(net, clock):
    a, sybils = net[0], net[3:]
    pid, status = decide(net, clock, change(sybils[0]), [a, *sybils])  # 4 of 6 voted: quorum, yes > no
    proposal = net[1].state["channels"]["general"]["proposals"][pid]
    assert proposal["quorum_reached"] and status == "rejected"  # 1 of the 3 validators said yes
    refused_everywhere(net, _ratified_by(a, pid, 5, 1, [a, *sybils]), "majority")
    assert all(validators(n) == ids(net[:3]) for n in net)


def test_an_addition_needs_a_majority_of_the_new_set_and_the_old_majority_no_longer_counts(net, clock):
    a, b, c, d = net[:4]
    pid, status = decide(net, clock, change(d), [a, b, c])
    assert status == "pending_ratification"
    refused_everywhere(net, _ratified_by(a, pid, 5, 1, [a, b]), "majority of the 4")  # the old set's majority
    event = _ratified_by(a, pid, 5, 1, [a, b, d])
    for node in net:
        node.receive([event])
        assert validators(node) == ids([a, b, c, d])
        assert [h["from_index"] for h in node.state["validator_history"]] == [0, 5]
    tax, _ = decide(net, clock, {"key": "task_completion_tax", "value": 0.1}, [a, b, c, d], kind="config_change")
    refused_everywhere(net, _ratified_by(a, tax, 9, 1, [a, b]), "majority of the 4")
    event = _ratified_by(d, tax, 9, 1, [b, c, d])  # the new validator writes and signs
    for node in net:
        node.receive([event])
        assert node.state["config"]["task_completion_tax"] == 0.1
    assert len({comparable(n.state) for n in net}) == 1


def test_a_removed_validators_signatures_no_longer_count(net, clock):
    a, b, c = net[:3]
    pid, status = decide(net, clock, change(c, "remove"), [a, b, *net[3:]])
    assert status == "pending_ratification"
    event = _ratified_by(a, pid, 5, 1, [a, b])  # a majority of the new set {a, b}
    for node in net:
        node.receive([event])
        assert validators(node) == ids([a, b])
    tax, _ = decide(net, clock, {"key": "task_completion_tax", "value": 0.1}, net, kind="config_change")
    refused_everywhere(net, _ratified_by(a, tax, 9, 1, [a, c]), "majority of the 2")
    refused_everywhere(net, _ratified_by(c, tax, 9, 1, [a, b, c]), "only validators")
    event = _ratified_by(b, tax, 9, 1, [a, b])
    for node in net:
        node.receive([event])
        assert node.state["config"]["task_completion_tax"] == 0.1


def test_a_change_without_governance_approval_is_refused_by_every_reducer(net, clock):
    a, b, c, d = net[:4]
    _, opened = a.submit("proposal_create", {"title": "t", "proposal_type": "validator_change", "params": change(d)})
    sync(net)
    refused_everywhere(net, _ratified_by(a, opened["id"], 5, 1, [a, b, c, d]), "not pending_ratification")
    turned_down, status = decide(net, clock, change(d), [])
    assert status == "rejected"
    refused_everywhere(net, _ratified_by(a, turned_down, 6, 1, [a, b, c, d]), "not pending_ratification")
    assert all(validators(n) == ids([a, b, c]) for n in net)
    bad = [
        ("config_change", {"key": "validator_set", "value": [d.node_id]}),
        ("validator_change", {**change(d), "node_id": [d.node_id, net[4].node_id]}),  # two at once
        ("validator_change", {**change(d), "action": "replace"}),
        ("validator_change", {**change(d), "public_key": net[4].identity.public_key}),  # not d's key
        ("validator_change", change(a)),  # already a validator
        ("validator_change", change(d, "remove")),  # not a validator
    ]
    for kind, params in bad:
        with pytest.raises(Reject):
            a.submit("proposal_create", {"title": "t", "proposal_type": kind, "params": params})


def test_the_set_never_shrinks_below_min_validators(clock):
    net = make_network(3, clock=clock, config={"proposal_voting_period": PERIOD_S, "min_validators": 2})
    a, b, c = net
    assert net[0].state["config"]["min_validators"] == 2
    first, _ = decide(net, clock, change(c, "remove"), [a, b, c])
    second, status = decide(net, clock, change(b, "remove"), [a, b, c])  # each alone leaves 2
    assert status == "pending_ratification"
    event = _ratified_by(a, first, 5, 1, [a, b])
    for node in net:
        node.receive([event])
        assert validators(node) == ids([a, b])
    refused_everywhere(net, _ratified_by(a, second, 6, 1, [a, b]), "min_validators")
    assert all(validators(n) == ids([a, b]) for n in net)
    with pytest.raises(Reject, match="min_validators"):
        a.submit("proposal_create", {"title": "t", "proposal_type": "validator_change", "params": change(b, "remove")})


# ----- through Raft: NodeCores with their Raft, attestations and gossip delivered in rounds


def drive(net, rounds):
    """Tick every Raft, deliver its messages (a validator's make a learner's Raft), attestations, gossip."""
    by_id = {n.node_id: n for n in net}
    for _ in range(rounds):
        for node in net:
            raft = node.ensure_raft(seed=sum(node.node_id.encode()))
            if raft is not None:
                raft.tick()
        moved = True
        while moved:
            moved = False
            for node in net:
                for msg in node.raft.take_messages() if node.raft else []:
                    moved = True
                    target = by_id[msg["to"]].raft_for(msg["from"])
                    if target is not None:
                        target.step(msg)
        for node in net:
            apply_and_attest(node, net)
        sync(net)


def leader_of(net):
    (leader,) = [n for n in net if n.raft is not None and n.raft.role == "leader"]
    return leader


def propose(net, pid, rounds=30):
    """What the ratify service does: ask the leader until the entry is appended (a learner catches up)."""
    for _ in range(rounds):
        leader = leader_of(net)
        try:
            return leader.raft_propose({"proposal_id": pid, "channel": "general", "by": leader.node_id})
        except Reject as exc:
            if exc.status != 503:
                raise
        drive(net, 1)
    raise AssertionError("never appended")


@pytest.mark.parametrize("snapshot_entries", [None, 5])
def test_through_raft_a_new_validator_catches_up_counts_and_a_removed_leader_steps_down(clock, snapshot_entries):
    """With `snapshot_entries` 5 the validators compact their Raft logs all along: the newcomer
    catches up from the leader's snapshot, and ratifications go on over compacted logs."""
    net = make_network(4, clock=clock, config={"proposal_voting_period": PERIOD_S}, validators=3)
    a, b, c, d = net
    for node in net:
        node.raft_snapshot_entries = snapshot_entries or node.raft_snapshot_entries
    drive(net, 40)
    first = leader_of(net)
    for n in range(70):  # more than one append batch for the newcomer to catch up with
        first.raft.propose({"cmd": n})
    drive(net, 3)
    add, _ = decide(net, clock, change(d), [a, b, c])
    remove, status = decide(net, clock, change(first, "remove"), [a, b, c, d])
    assert status == "pending_ratification"
    with pytest.raises(Reject, match="not pending_ratification"):
        first.raft_propose({"proposal_id": decide(net, clock, change(c, "remove"), [])[0]})
    assert d.raft is None
    index = propose(net, add)
    assert d.raft is not None and d.raft.last_index() >= first.raft.commit_index  # caught up before it counts
    if snapshot_entries:
        assert d.raft.snap_index() >= 70  # from the snapshot: the log it covers was never sent
    with pytest.raises(Reject, match="one change at a time") as second:
        first.raft_propose({"proposal_id": remove, "channel": "general", "by": first.node_id})
    assert second.value.status == 409
    drive(net, 5)
    for node in net:
        assert validators(node) == ids(net) and node.state["validator_history"][-1]["from_index"] == index
    assert all(n.raft.voters() == ids(net) for n in net)
    signers = net[0].state["ratified"][-1]["signers"]
    assert len(signers) >= 3  # a majority of the 4 of the new set

    leader_of(net).raft_propose({"proposal_id": remove, "channel": "general", "by": first.node_id})
    drive(net, 60)
    rest = [n for n in net if n is not first]
    assert first.raft.role != "leader" and leader_of(net) in rest
    assert all(validators(n) == ids(rest) for n in net)
    tax, _ = decide(net, clock, {"key": "task_completion_tax", "value": 0.1}, net, kind="config_change")
    propose(net, tax)
    drive(net, 5)
    assert all(n.state["config"]["task_completion_tax"] == 0.1 for n in net)
    assert first.node_id not in net[0].state["ratified"][-1]["signers"]
    assert len({comparable(n.state) for n in net}) == 1
    if snapshot_entries:
        assert all(n.raft.snap_index() > 70 for n in net)


def test_through_raft_a_change_waits_for_earlier_entries_that_change_what_is_allowed(clock):
    net = make_network(3, clock=clock, config={"proposal_voting_period": PERIOD_S})
    c = net[2]
    drive(net, 40)
    floor, _ = decide(net, clock, {"key": "min_validators", "value": 3}, net, kind="config_change")
    remove, status = decide(net, clock, change(c, "remove"), net)  # allowed now: 2 >= 1
    assert status == "pending_ratification"
    leader = leader_of(net)
    leader.raft_propose({"proposal_id": floor, "channel": "general", "by": leader.node_id})
    with pytest.raises(Reject, match="await their ratification") as waiting:
        leader.raft_propose({"proposal_id": remove, "channel": "general", "by": leader.node_id})
    assert waiting.value.status == 503
    drive(net, 5)
    assert all(n.state["config"]["min_validators"] == 3 for n in net)
    with pytest.raises(Reject, match="min_validators"):
        leader_of(net).raft_propose({"proposal_id": remove, "channel": "general", "by": leader.node_id})
    assert leader_of(net).raft.voters() == ids(net) and all(validators(n) == ids(net) for n in net)


def test_checkpoints_are_certified_by_the_set_in_force_and_a_forged_history_is_refused(clock):
    net = make_network(5, clock=clock, config={"proposal_voting_period": PERIOD_S}, validators=3)
    a, b, c, d, e = net
    steps = [(change(d), a, [a, b, d]), (change(a, "remove"), b, [b, c]), (change(b, "remove"), c, [c, d])]
    for index, (params, author, signers) in enumerate(steps, start=5):
        pid, status = decide(net, clock, params, net)
        assert status == "pending_ratification"
        event = _ratified_by(author, pid, index, 1, signers)
        for node in net:
            node.receive([event])
    assert all(validators(n) == ids([c, d]) for n in net)  # a majority of the genesis set is gone
    clock.advance(2)
    checkpoint_round(net)
    assert all(n.stats["checkpoints_installed"] == 1 for n in net)
    raw = c.checkpoint_after(0)
    certificate = raw["certificate"]
    assert {s["by"] for s in certificate["signatures"]} == set(ids([c, d]))
    fresh = NodeCore("fresh", None, now_ms=clock)
    fresh.set_genesis_author(a.node_id)
    assert fresh.load_checkpoint(raw) and validators(fresh) == ids([c, d])

    h, position_hash = certificate["horizon"], certificate["position_hash"]
    old_majority = [cp.sign(x.identity, h, position_hash, certificate["state_hash"]) for x in (a, b)]
    with pytest.raises(cp.CheckpointError, match="majority of the validators"):
        cp.verify_checkpoint({**raw, "certificate": {**certificate, "signatures": old_majority}}, a.node_id)
    state = copy.deepcopy(raw["state"])  # e claims it was added, signing its own addition
    grown = sorted([*ids([c, d]), e.node_id])
    claim = {e.node_id: [e.identity.public_key, e.identity.sign(ratify_message("x", 99, 1))]}
    state["validator_history"].append(
        {"from_index": 99, "validators": grown, "proposal_id": "x", "term": 1, "proof": claim}
    )
    state["config"]["validator_set"] = grown
    forged = {**certificate, "state_hash": digest(state)}
    forged["signatures"] = [cp.sign(x.identity, h, position_hash, forged["state_hash"]) for x in (c, e)]
    with pytest.raises(cp.CheckpointError, match="not signed by a majority of its set"):
        cp.verify_checkpoint({**raw, "state": state, "certificate": forged}, a.node_id)
