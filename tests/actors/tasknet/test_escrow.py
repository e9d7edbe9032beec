"""The escrow lifecycle: completion is submitted by the assignee and accepted or disputed by the
creator (accepted by itself after a configurable time); claims, auctions and forming teams
expire or are cancelled with refunds; bids can be withdrawn. No escrow stays locked forever,
and the supply invariant holds over random schedules of all of it."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.tasknet.ledger import DEFAULT_CONFIG, Reject
from tests.actors.tasknet.netsim import ManualClock, comparable, make_network, schedules, sync

HOURS = {"claim_timeout_hours": 48, "completion_auto_accept_hours": 24, "auction_select_window_hours": 12}
clock = pytest.fixture(lambda: ManualClock(), name="clock")


@pytest.fixture()
def net(clock):
    return make_network(3, clock=clock, config=HOURS)


def balance(node, who):
    return node.state["nodes"][who.node_id]["balance"]


def task(node, task_id):
    return node.state["channels"]["general"]["tasks"][task_id]


def _claimed(net, reward=100):
    a, b, _ = net
    _, t = a.submit("task_create", {"title": "t", "reward": reward})
    sync(net)
    b.submit("task_claim", {"task_id": t["id"]})
    sync(net)
    return t["id"]


def test_the_timeouts_are_config_items_with_defaults():
    assert DEFAULT_CONFIG["claim_timeout_hours"] == 168
    assert DEFAULT_CONFIG["completion_auto_accept_hours"] == 72
    assert DEFAULT_CONFIG["auction_select_window_hours"] == 72


def test_the_assignee_alone_cannot_collect_the_creator_accepts(net):
    a, b, _ = net
    tid = _claimed(net)
    _, submitted = b.submit("task_complete", {"task_id": tid})
    assert submitted["status"] == "submitted" and submitted["reward_transferred"] == 0
    assert balance(b, b) == 1000 and b.state["escrow"]["task:" + tid] == 100
    with pytest.raises(Reject) as err:
        b.submit("task_accept", {"task_id": tid})
    assert err.value.status == 403
    sync(net)
    _, accepted = a.submit("task_accept", {"task_id": tid})
    assert accepted == {"task_id": tid, "reward_transferred": 98, "tax_collected": 2, "accepted_by": "creator"}
    sync(net)
    assert balance(b, b) == 1098 and task(b, tid)["status"] == "completed"


def test_a_dispute_sends_the_task_back_to_the_assignee(net):
    a, b, _ = net
    tid = _claimed(net)
    b.submit("task_complete", {"task_id": tid})
    sync(net)
    with pytest.raises(Reject):
        b.submit("task_dispute", {"task_id": tid, "reason": "self"})
    a.submit("task_dispute", {"task_id": tid, "reason": "tests fail"})
    sync(net)
    assert task(b, tid)["status"] == "claimed" and task(b, tid)["disputes"][0]["reason"] == "tests fail"
    b.submit("task_complete", {"task_id": tid})
    sync(net)
    a.submit("task_accept", {"task_id": tid})
    assert balance(a, b) == 1098


def test_silence_from_the_creator_is_acceptance_after_the_configured_time(net, clock):
    a, b, _ = net
    tid = _claimed(net)
    b.submit("task_complete", {"task_id": tid})
    with pytest.raises(Reject, match="auto-accept"):
        b.submit("task_accept", {"task_id": tid})
    clock.advance(24 * 3600)
    _, accepted = b.submit("task_accept", {"task_id": tid})
    assert accepted["accepted_by"] == "auto" and accepted["reward_transferred"] == 98
    sync(net)
    with pytest.raises(Reject):  # too late to dispute
        a.submit("task_dispute", {"task_id": tid, "reason": "late"})
    assert balance(a, b) == 1098


def test_an_abandoned_claim_expires_and_refunds_the_creator(net, clock):
    a, b, c = net
    tid = _claimed(net)
    with pytest.raises(Reject, match="not expired"):
        c.submit("task_expire", {"task_id": tid})
    clock.advance(48 * 3600)
    c.submit("task_expire", {"task_id": tid})
    sync(net)
    assert task(a, tid)["status"] == "expired" and balance(a, a) == 1000 and not a.state["escrow"]
    with pytest.raises(Reject):
        b.submit("task_complete", {"task_id": tid})


def test_an_auction_nobody_selects_expires_and_refunds(net, clock):
    a, b, c = net
    _, t = a.submit(
        "task_create", {"title": "a", "enable_auction": True, "max_reward": 200, "auction_deadline_hours": 1}
    )
    sync(net)
    b.submit("task_bid", {"task_id": t["id"], "amount": 150, "estimated_days": 2})
    sync(net)
    clock.advance(3600 + 12 * 3600 + 1)
    with pytest.raises(Reject, match="selection window"):
        a.submit("task_select_bid", {"task_id": t["id"], "bidder_id": b.node_id})
    c.submit("task_expire", {"task_id": t["id"]})
    sync(net)
    assert task(a, t["id"])["status"] == "expired" and balance(a, a) == 1000 and not a.state["escrow"]


def test_a_bid_can_be_withdrawn_while_the_auction_is_open(net):
    a, b, _ = net
    _, t = a.submit("task_create", {"title": "a", "enable_auction": True, "max_reward": 50})
    sync(net)
    b.submit("task_bid", {"task_id": t["id"], "amount": 40, "estimated_days": 2})
    b.submit("task_bid_withdraw", {"task_id": t["id"]})
    sync(net)
    assert task(a, t["id"])["auction"]["bids"] == {}
    with pytest.raises(Reject):
        b.submit("task_bid_withdraw", {"task_id": t["id"]})
    a.submit("task_delete", {"task_id": t["id"]})  # no bids left: the creator may delete it
    assert balance(a, a) == 1000


def test_a_forming_team_task_can_be_cancelled_with_a_refund(net):
    a, b, _ = net
    subtasks = [{"title": "s", "required_skills": [], "reward_percentage": 100}]
    _, comp = a.submit(
        "composite_create", {"title": "c", "total_reward": 80, "required_team_size": 2, "subtasks": subtasks}
    )
    sync(net)
    with pytest.raises(Reject):
        b.submit("composite_cancel", {"task_id": comp["task_id"]})
    a.submit("composite_cancel", {"task_id": comp["task_id"]})
    assert balance(a, a) == 1000 and not a.state["escrow"]


OPS = schedules(
    [
        "create",
        "auction",
        "claim",
        "complete",
        "accept",
        "dispute",
        "expire",
        "delete",
        "bid",
        "withdraw",
        "select",
        "team",
        "cancel",
        "advance",
    ],
    3,
    50,
)


def _step(nodes, clock, op, actor, target, amount):
    node = nodes[actor]
    tasks = sorted(node.state["task_index"])
    comps = sorted(node.state["composite_index"])
    tid = tasks[target % len(tasks)] if tasks else "none"
    cid = comps[target % len(comps)] if comps else "none"
    subtasks = [{"title": "s", "required_skills": [], "reward_percentage": 60}]
    payloads = {
        "create": ("task_create", {"title": "t", "reward": amount}),
        "auction": ("task_create", {"title": "a", "enable_auction": True, "max_reward": amount + 1}),
        "claim": ("task_claim", {"task_id": tid}),
        "complete": ("task_complete", {"task_id": tid}),
        "accept": ("task_accept", {"task_id": tid}),
        "dispute": ("task_dispute", {"task_id": tid, "reason": "no"}),
        "expire": ("task_expire", {"task_id": tid}),
        "delete": ("task_delete", {"task_id": tid}),
        "bid": ("task_bid", {"task_id": tid, "amount": amount % 50 + 1, "estimated_days": 1}),
        "withdraw": ("task_bid_withdraw", {"task_id": tid}),
        "select": ("task_select_bid", {"task_id": tid, "bidder_id": nodes[target % 3].node_id}),
        "team": (
            "composite_create",
            {"title": "c", "total_reward": amount, "required_team_size": 1, "subtasks": subtasks},
        ),
        "cancel": ("composite_cancel", {"task_id": cid}),
    }
    if op == "advance":
        clock.advance(amount * 600)
        return
    try:
        node.submit(*payloads[op])
    except Reject:
        pass


def _drain(nodes, clock):
    """Long after every deadline, anyone can settle every task: no escrow stays locked."""
    clock.advance(10_000 * 3600)
    node = nodes[0]
    for tid in sorted(node.state["task_index"]):
        for type_ in ("task_accept", "task_expire"):
            try:
                node.submit(type_, {"task_id": tid})
            except Reject:
                pass
    for cid in sorted(node.state["composite_index"]):
        try:
            nodes[0].submit("composite_cancel", {"task_id": cid})
        except Reject:
            pass


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, seed=st.integers(0, 10_000))
def test_supply_is_conserved_and_no_task_escrow_is_locked_forever(ops, seed):
    rng = random.Random(seed)
    clock = ManualClock()
    nodes = make_network(3, clock=clock, config=HOURS)
    for op in ops:
        _step(nodes, clock, *op)
        if rng.random() < 0.5:
            sync(nodes)
    sync(nodes)
    _drain(nodes, clock)
    sync(nodes)
    assert len({comparable(n.state) for n in nodes}) == 1
    state = nodes[0].state
    held = sum(n["balance"] for n in state["nodes"].values()) + sum(state["treasuries"].values())
    assert held + sum(state["escrow"].values()) == state["minted"] - state["burned"] == 3000
    locked = {k for k in state["escrow"] if k.startswith("task:")}
    open_tasks = {"task:" + t["id"] for t in state["channels"]["general"]["tasks"].values() if t["status"] in ("open",)}
    assert locked <= open_tasks  # only unclaimed open tasks still hold escrow (their creator can delete them)
