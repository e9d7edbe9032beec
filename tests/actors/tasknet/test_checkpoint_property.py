"""Property: folding a certified checkpoint and the events after it gives the state that folding
every event from genesis gives, over random schedules of work, deliveries and checkpoints; a node
restarted from its compacted files reaches it too. When one node missed the checkpoint (its events
below the horizon arrive late), every node still converges to one state."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.tasknet.node import NodeCore
from tests.actors.tasknet.netsim import ManualClock, checkpoint_round, comparable, make_network, sync
from tests.actors.tasknet.test_convergence import OPS, run


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, seed=st.integers(0, 10_000), marks=st.sets(st.integers(0, 39), min_size=1, max_size=3))
def test_checkpoint_and_tail_fold_to_the_full_fold(ops, seed, marks):
    rng = random.Random(seed)
    clock = ManualClock()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [Path(tmp) / f"n{i}" for i in range(3)]
        nodes = make_network(3, clock=clock, data_dirs=dirs)
        reference = NodeCore("reference", None, now_ms=clock)
        reference.set_genesis_author(nodes[0].node_id)
        reference.receive([e for n in nodes for e in n.log.all_events()])
        pool: list = []
        for i, op in enumerate(ops):
            run(nodes, *op, pool)
            clock.advance(rng.uniform(0.01, 0.3))
            if rng.random() < 0.3:
                receiver = rng.choice(nodes)
                receiver.receive(rng.sample(pool, k=min(len(pool), rng.randrange(1, 4))))
            if i in marks:
                sync(nodes)
                clock.advance(2)
                checkpoint_round(nodes)
        sync(nodes)
        order = list(pool)
        rng.shuffle(order)
        reference.receive(order)
        expected = comparable(reference.state)
        assert [comparable(n.state) for n in nodes] == [expected] * 3
        if any(m < len(ops) for m in marks):
            assert all(n.stats["checkpoints_installed"] >= 1 for n in nodes)
        nodes[0].close()
        restarted = NodeCore("n1", dirs[0], now_ms=clock)
        assert comparable(restarted.state) == expected
        assert restarted.reducer.horizon == nodes[0].reducer.horizon
        for node in [restarted, *nodes[1:]]:
            node.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, seed=st.integers(0, 10_000))
def test_a_node_that_missed_the_checkpoint_converges_with_the_others(ops, seed):
    rng = random.Random(seed)
    mark = rng.randrange(len(ops))
    clock = ManualClock()
    nodes = make_network(3, clock=clock)
    a, b, c = nodes
    pool: list = []
    for i, op in enumerate(ops):
        run(nodes, *op, pool)
        clock.advance(rng.uniform(0.01, 0.3))
        if i == mark:
            sync([a, c])  # b's latest events reach nobody before the horizon passes
            clock.advance(2)
            checkpoint_round([a, c])
    sync(nodes)
    assert a.checkpoint is not None
    late = [e for e in pool if e["author"] == b.node_id and e["hlc"][0] < a.reducer.horizon]
    assert a.stats["events_below_horizon"] == len(late)
    assert b.load_checkpoint(a.checkpoint_after(0))
    sync(nodes)
    assert len({comparable(n.state) for n in nodes}) == 1
