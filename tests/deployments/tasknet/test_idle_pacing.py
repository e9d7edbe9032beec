"""An idle network's loops: anti-entropy backs off and still repairs, Raft wakes for deadlines only.

Three in-process nodes behind the app (conftest.py), `anti_entropy_max_interval_s` 0.8 so the
backoff reaches its cap within a couple of seconds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from actors.tasknet.node_actor import TaskNode
from actors.tasknet.raft import LEADER
from tests.deployments.tasknet.conftest import Net, make_config, open_net
from tests.polling import eventually

CAP = 0.8


@pytest.fixture
async def idle_net(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Net]:
    async for net in open_net(monkeypatch, make_config(tmp_path, anti_entropy_max_interval_s=CAP)):
        yield net


def nodes(net: Net) -> dict[str, TaskNode]:
    handles = net.app.state.component.network.handles
    return {name: handle._instance for name, handle in handles.items()}


async def backed_off(net: Net) -> None:
    """Wait until every node has found nothing to repair for long enough to pause `CAP` between rounds."""
    await eventually(
        lambda: all(n.backoff.interval == CAP for n in nodes(net).values()),
        timeout=20,
        what="every node idle at the anti-entropy cap",
    )


async def same_log(net: Net) -> bool:
    return len({n.core.log.digest() for n in nodes(net).values()}) == 1


async def test_an_idle_node_still_repairs_an_event_it_missed_within_the_backoff_cap(idle_net: Net):
    """No push at all (push gossip off everywhere) and nothing else changing: n2 and n3, idle at the
    cap, get n1's new event from their own backed-off rounds (digests differ, so they pull)."""
    net = idle_net
    await net.settle(lambda: same_log(net))
    for node in nodes(net).values():
        node.settings["push_gossip"] = False
    await backed_off(net)
    n1, n2, n3 = (nodes(net)[n] for n in ("n1", "n2", "n3"))
    pulls = n2.anti_entropy_pulls + n3.anti_entropy_pulls
    event, _ = n1.core.submit("task_create", {"title": "missed", "reward": 1})
    n1.core.outbox.clear()  # never pushed: only anti-entropy carries it
    await eventually(
        lambda: n2.core.log.has(event) and n3.core.log.has(event),
        timeout=4 * CAP + 5,
        what="the missed event repaired by anti-entropy",
    )
    assert n2.anti_entropy_pulls + n3.anti_entropy_pulls > pulls


async def test_idle_rounds_compare_digests_and_do_not_pull(idle_net: Net):
    net = idle_net
    await net.settle(lambda: same_log(net))
    await backed_off(net)
    before = {name: (n.anti_entropy_rounds, n.anti_entropy_pulls) for name, n in nodes(net).items()}
    await eventually(
        lambda: all(n.anti_entropy_rounds >= before[name][0] + 3 for name, n in nodes(net).items()),
        timeout=20,
        what="three more idle rounds on every node",
    )
    assert {name: n.anti_entropy_pulls for name, n in nodes(net).items()} == {
        name: pulls for name, (_, pulls) in before.items()
    }
    assert all(n.backoff.interval == CAP for n in nodes(net).values())


async def test_a_change_brings_a_backed_off_node_back_to_the_base_interval(idle_net: Net):
    net = idle_net
    await net.settle(lambda: same_log(net))
    await backed_off(net)
    resets = {name: n.backoff.resets for name, n in nodes(net).items()}
    created = await net.ok("n1", "POST", "/tasks", json={"title": "a change", "reward": 1})
    assert created["title"] == "a change"
    await eventually(
        lambda: all(n.backoff.resets > resets[name] for name, n in nodes(net).items()),
        timeout=10,
        what="every node's backoff reset by the new event",
    )
    stats = await net.ok("n2", "GET", "/network/stats")
    assert stats["anti_entropy_resets"] > resets["n2"]


async def test_a_partitioned_node_heals_after_idling_at_the_cap(idle_net: Net):
    """n3 cut off; both sides write, then idle at the cap; healing the links converges the logs."""
    net = idle_net
    await net.settle(lambda: same_log(net))
    await net.app.state.component.network.handles["n3"].set_blocked.remote(["n1", "n2"])
    for name in ("n1", "n2"):
        await net.app.state.component.network.handles[name].set_blocked.remote(["n3"])
    await net.ok("n1", "POST", "/tasks", json={"title": "left", "reward": 1})
    await net.ok("n3", "POST", "/tasks", json={"title": "right", "reward": 1})
    await backed_off(net)
    assert not await same_log(net), "the partition held"
    for handle in net.app.state.component.network.handles.values():
        await handle.set_blocked.remote([])
    await net.settle(lambda: same_log(net), timeout=4 * CAP + 5)


async def test_the_raft_timer_wakes_for_deadlines_not_for_every_tick(tmp_path: Any, monkeypatch: pytest.MonkeyPatch):
    """At the default 50 ms tick a leader keeps its term across many heartbeats, and a follower's
    timer wakes for its election deadline (moved by the heartbeats), not once per tick."""
    config = make_config(tmp_path, raft_tick_s=0.05)
    async for net in open_net(monkeypatch, config):
        await net.settle(lambda net=net: same_log(net))

        async def leader(net: Net = net) -> TaskNode | None:
            led = [n for n in nodes(net).values() if n.core.raft and n.core.raft.role == LEADER]
            return led[0] if len(led) == 1 else None

        boss = await eventually(leader, timeout=10, what="a leader")
        term = boss.core.raft.term
        follower = next(n for n in nodes(net).values() if n is not boss)
        wakes, ticks = follower.raft_timer_wakes, follower.core.raft._ticks
        await eventually(
            lambda f=follower, t=ticks: f.core.raft._ticks >= t + 100, timeout=30, what="100 ticks on a follower"
        )
        assert boss.core.raft.role == LEADER and boss.core.raft.term == term
        assert follower.core.raft.leader_id == boss.core.node_id
        assert (follower.raft_timer_wakes - wakes) * 2 < follower.core.raft._ticks - ticks


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"raft_heartbeat_interval_s": 0.3}, "raft_heartbeat_interval_s"),  # 6 ticks of an election timeout of 10
        ({"raft_heartbeat_interval_s": 0.3, "raft_election_timeout_s": 0.5}, "raft_heartbeat_interval_s"),
        ({"anti_entropy_max_interval_s": 0.05}, "anti_entropy_max_interval_s"),
        ({"anti_entropy_interval_s": 0}, "anti_entropy_interval_s"),
    ],
)
def test_pacing_settings_out_of_range_are_refused(tmp_path: Any, settings: dict[str, Any], message: str):
    with pytest.raises(ValidationError, match=message):
        make_config(tmp_path, raft_tick_s=0.05, **settings)


async def test_the_heartbeat_interval_is_given_to_the_nodes_raft_in_ticks(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
):
    config = make_config(
        tmp_path, nodes=["n1"], raft_tick_s=0.05, raft_heartbeat_interval_s=0.22, raft_election_timeout_s=1.0
    )
    assert (config.raft_heartbeat_ticks(), config.raft_election_ticks()) == (5, 20)
    async for net in open_net(monkeypatch, config):
        node = nodes(net)["n1"]
        raft = await eventually(lambda node=node: node.core.raft, what="n1's Raft")
        assert (raft.heartbeat_ticks, raft.election_ticks) == (5, 20)
