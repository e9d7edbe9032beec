"""Property: any delivery order or duplication of the events converges every node to one state,
and the economy invariant holds after every applied event (the reducer asserts it)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.tasknet.ledger import Reject
from tests.actors.tasknet.netsim import comparable, make_network, schedules, sync

OPS = schedules(
    ["create", "claim", "complete", "delete", "auction", "bid", "select", "propose", "vote", "close"], 5, 40
)


def run(nodes, op, actor, target, amount, pool):
    node = nodes[actor % len(nodes)]
    tasks = sorted(node.state["task_index"])
    props = sorted(node.state["proposal_index"])
    task = tasks[target % len(tasks)] if tasks else "none"
    prop = props[target % len(props)] if props else "none"
    other = nodes[target % len(nodes)].node_id
    payloads = {
        "create": ("task_create", {"title": f"t{target}", "reward": amount}),
        "auction": ("task_create", {"title": "a", "enable_auction": True, "max_reward": amount + 1}),
        "claim": ("task_claim", {"task_id": task}),
        "complete": ("task_complete", {"task_id": task}),
        "delete": ("task_delete", {"task_id": task}),
        "bid": ("task_bid", {"task_id": task, "amount": amount % 50 + 1, "estimated_days": 1}),
        "select": ("task_select_bid", {"task_id": task, "bidder_id": other}),
        "propose": ("proposal_create", {"title": "p"}),
        "vote": ("vote", node.public_vote_payload(prop, "yes" if amount % 2 else "no")),
        "close": ("proposal_close", {"proposal_id": prop}),
    }
    type_, payload = payloads[op]
    try:
        node.submit(type_, payload)
    except Reject:
        return
    pool.append(node.outbox[-1])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, size=st.integers(3, 5), seed=st.integers(0, 10_000))
def test_any_delivery_order_converges(ops, size, seed):
    rng = random.Random(seed)
    nodes = make_network(size)
    pool: list = []
    for op in ops:
        run(nodes, *op, pool)
        if rng.random() < 0.3:  # partial, shuffled, duplicated delivery while work goes on
            receiver = rng.choice(nodes)
            batch = rng.sample(pool, k=min(len(pool), rng.randrange(1, 4)))
            receiver.receive(batch + batch[:1])
    for node in nodes:
        order = pool + rng.sample(pool, k=len(pool) // 2)
        rng.shuffle(order)
        node.receive(order)
    sync(nodes)
    digests = {comparable(n.state) for n in nodes}
    assert len(digests) == 1
    state = nodes[0].state
    held = sum(n["balance"] for n in state["nodes"].values()) + sum(state["treasuries"].values())
    assert held + sum(state["escrow"].values()) == state["minted"] - state["burned"] == 1000 * size
