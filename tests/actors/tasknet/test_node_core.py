"""The signed log and the state machine: tasks, escrow, auctions, composite tasks, governance."""

from __future__ import annotations

import pytest

from actors.tasknet.events import EventError
from actors.tasknet.ledger import Reject
from tests.actors.tasknet.netsim import ManualClock, comparable, make_network, sync


@pytest.fixture()
def net():
    return make_network(3)


def balance(node, who):
    return node.state["nodes"][who.node_id]["balance"]


def test_escrow_claim_complete_and_tax(net):
    a, b, _ = net
    _, task = a.submit("task_create", {"title": "write docs", "reward": 100, "tags": ["docs"]})
    assert balance(a, a) == 900 and a.state["escrow"]["task:" + task["id"]] == 100
    sync(net)
    b.submit("task_claim", {"task_id": task["id"]})
    b.submit("task_progress", {"task_id": task["id"], "progress_note": "half"})
    b.submit("task_complete", {"task_id": task["id"]})
    sync(net)
    _, done = a.submit("task_accept", {"task_id": task["id"]})
    assert done == {"task_id": task["id"], "reward_transferred": 98, "tax_collected": 2, "accepted_by": "creator"}
    sync(net)
    for node in net:
        assert balance(node, b) == 1098
        assert node.state["treasuries"]["general"] == 2
        assert node.state["nodes"][b.node_id]["reputation"]["_total"] == 10
        assert node.state["nodes"][b.node_id]["reputation"]["tags"] == {"docs": 10}


def test_nobody_claims_their_own_rewarded_task_or_overspends(net):
    a, _b, _ = net
    _, task = a.submit("task_create", {"title": "t", "reward": 10})
    with pytest.raises(Reject) as err:
        a.submit("task_claim", {"task_id": task["id"]})
    assert err.value.status == 403
    with pytest.raises(Reject, match="insufficient balance"):
        a.submit("task_create", {"title": "too much", "reward": 991})


def test_zero_reward_tasks_farm_no_reputation(net):
    a, b, _ = net
    for i in range(5):
        _, task = a.submit("task_create", {"title": f"t{i}", "reward": 0})
        sync(net)
        b.submit("task_claim", {"task_id": task["id"]})
        b.submit("task_complete", {"task_id": task["id"]})
    assert b.state["nodes"][b.node_id]["reputation"]["_total"] == 0


def test_only_the_assignee_progresses_and_only_the_creator_deletes_unclaimed(net):
    a, b, c = net
    _, task = a.submit("task_create", {"title": "t", "reward": 5})
    sync(net)
    with pytest.raises(Reject):
        c.submit("task_delete", {"task_id": task["id"]})
    b.submit("task_claim", {"task_id": task["id"]})
    sync(net)
    with pytest.raises(Reject) as err:
        c.submit("task_complete", {"task_id": task["id"]})
    assert err.value.status == 403
    with pytest.raises(Reject):
        a.submit("task_delete", {"task_id": task["id"]})


def test_delete_refunds_the_escrow(net):
    a, _, _ = net
    _, task = a.submit("task_create", {"title": "t", "reward": 50})
    a.submit("task_delete", {"task_id": task["id"]})
    assert balance(a, a) == 1000 and not a.state["escrow"]


def test_auction_escrows_max_reward_and_refunds_the_difference(net):
    a, b, c = net
    _, task = a.submit(
        "task_create", {"title": "a", "enable_auction": True, "max_reward": 200, "auction_deadline_hours": 1}
    )
    assert task["status"] == "auction_open"
    sync(net)
    b.submit("task_bid", {"task_id": task["id"], "amount": 150, "estimated_days": 2})
    c.submit("task_bid", {"task_id": task["id"], "amount": 120, "estimated_days": 3})
    with pytest.raises(Reject):
        c.submit("task_bid", {"task_id": task["id"], "amount": 100, "estimated_days": 3})
    sync(net)
    _, sel = a.submit("task_select_bid", {"task_id": task["id"], "bidder_id": c.node_id})
    assert sel == {"winner": c.node_id, "amount": 120, "task_status": "claimed"}
    assert balance(a, a) == 880
    sync(net)
    c.submit("task_complete", {"task_id": task["id"]})
    sync(net)
    a.submit("task_accept", {"task_id": task["id"]})
    sync(net)
    assert balance(a, c) == 1000 + 120 - 2


def test_composite_team_subtasks_assigned_and_paid(net):
    a, b, c = net
    b.submit("skills_set", {"skills": ["python"], "bio": "b"})
    c.submit("skills_set", {"skills": ["design"], "bio": "c"})
    _, comp = a.submit(
        "composite_create",
        {
            "title": "site",
            "total_reward": 100,
            "required_team_size": 2,
            "subtasks": [
                {"title": "backend", "required_skills": ["python"], "reward_percentage": 60},
                {"title": "ui", "required_skills": ["design"], "reward_percentage": 30},
            ],
        },
    )
    assert comp["status"] == "forming_team"
    sync(net)
    b.submit("composite_apply", {"task_id": comp["task_id"], "message": "me"})
    c.submit("composite_apply", {"task_id": comp["task_id"], "message": "me too"})
    sync(net)
    a.submit("composite_accept", {"task_id": comp["task_id"], "applicant_id": b.node_id})
    _, acc = a.submit("composite_accept", {"task_id": comp["task_id"], "applicant_id": c.node_id})
    assert acc == {"team_size": 2, "required_size": 2}
    sync(net)
    record = b.state["channels"]["general"]["composite_tasks"][comp["task_id"]]
    assert record["status"] == "in_progress"
    assert [s["assignee"] for s in record["subtasks"]] == [b.node_id, c.node_id]
    assert set(b.state["channels"][comp["workspace_channel"]]["participants"]) == {a.node_id, b.node_id, c.node_id}
    with pytest.raises(Reject):
        c.submit("subtask_complete", {"task_id": comp["task_id"], "subtask_id": "sub1"})
    _, r1 = b.submit("subtask_complete", {"task_id": comp["task_id"], "subtask_id": "sub1"})
    assert r1["all_subtasks_complete"] is False
    sync(net)
    _, r2 = c.submit("subtask_complete", {"task_id": comp["task_id"], "subtask_id": "sub2"})
    assert r2["all_subtasks_complete"] is True
    sync(net)
    assert balance(c, a) == 910  # 10% remainder refunded
    assert balance(c, b) == 1059 and balance(c, c) == 1029


def test_public_and_anonymous_votes_and_nullifiers():
    clock = ManualClock()
    net = make_network(3, clock=clock, config={"proposal_voting_period": 60})
    a, b, c = net
    _, prop = a.submit("proposal_create", {"title": "p", "proposal_type": "generic"})
    sync(net)
    b.submit("vote", b.public_vote_payload(prop["id"], "yes"))
    with pytest.raises(Reject):
        b.submit("vote", b.public_vote_payload(prop["id"], "no"))
    proof = c.anonymous_proof(prop["id"], "no")
    c.submit_anonymous(prop["id"], "no", proof, "general")
    with pytest.raises(Reject, match="nullifier"):
        c.submit_anonymous(prop["id"], "no", c.anonymous_proof(prop["id"], "no"), "general")
    forged = {**proof, "response": [proof["response"][1], proof["response"][0], proof["response"][2]]}
    with pytest.raises(Reject, match="does not verify"):
        a.submit_anonymous(prop["id"], "no", forged, "general")
    with pytest.raises(Reject):
        a.submit_anonymous(
            prop["id"], "no", {**a.anonymous_proof(prop["id"], "no"), "tier": "expert", "tier_weight": 2.0}, "general"
        )
    sync(net)
    clock.advance(60)
    _, closed = a.submit("proposal_close", {"proposal_id": prop["id"]})
    assert closed["yes_votes"] == 1.0 and closed["no_votes"] == 1.0 and closed["result"] == "rejected"
    sync(net)
    assert comparable(a.state) == comparable(b.state) == comparable(c.state)


def test_a_forged_or_tampered_event_is_refused(net):
    a, b, _ = net
    event, _ = a.submit("task_create", {"title": "t", "reward": 1})
    tampered = {**event, "payload": {**event["payload"], "reward": 0}}
    with pytest.raises(EventError):
        b.log.add(tampered)
    assert b.receive([tampered]) == []
    assert b.stats["events_invalid"] == 1


def test_a_restarted_node_recovers_its_log(tmp_path):
    dirs = [tmp_path / f"n{i}" for i in range(3)]
    net = make_network(3, data_dirs=dirs)
    net[0].submit("task_create", {"title": "persisted", "reward": 3})
    sync(net)
    from actors.tasknet.node import NodeCore

    again = NodeCore("n2", dirs[1])
    assert again.node_id == net[1].node_id
    assert comparable(again.state) == comparable(net[1].state)


def test_events_stamped_far_in_the_future_wait(net):
    from actors.tasknet.events import make_event

    a, b, _ = net
    chain = a.log.chains[a.node_id]
    ahead = make_event(
        a.identity,
        len(chain) + 1,
        chain[-1]["id"],
        [chain[-1]["hlc"][0] + 10**9, 0],
        "general",
        "skills_set",
        {"skills": []},
    )
    assert b.receive([ahead]) == []
    assert b.stats["events_future"] == 1 and not b.log.has(ahead)


def test_an_equivocating_author_is_cut_everywhere_once_both_versions_spread(net):
    from actors.tasknet.events import make_event

    a, b, c = net
    chain = a.log.chains[a.node_id]
    seq, prev, hlc = len(chain) + 1, chain[-1]["id"], [chain[-1]["hlc"][0] + 1, 0]
    one = make_event(a.identity, seq, prev, hlc, "general", "task_create", {"title": "one", "reward": 1})
    two = make_event(a.identity, seq, prev, hlc, "general", "task_create", {"title": "two", "reward": 1})
    b.receive([one])
    c.receive([two])
    assert comparable(b.state) != comparable(c.state)
    sync(net)
    assert a.node_id in b.log.equivocations and a.node_id in c.log.equivocations
    assert comparable(b.state) == comparable(c.state)
    titles = [t["title"] for t in b.state["channels"]["general"]["tasks"].values()]
    assert "one" not in titles and "two" not in titles
