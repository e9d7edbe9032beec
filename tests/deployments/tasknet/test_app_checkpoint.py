"""Checkpoints through the running network: the nodes sign their folded state at each horizon,
gossip the signatures, install the certified checkpoint, compact events.log, and keep agreeing;
`/network/stats` shows it. A setting that makes no sense is refused at load."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from actors.tasknet.node_actor import TaskNode
from actors.tasknet.wal import RecordLog
from rayfleet.state import call
from tests.deployments.tasknet.conftest import Net, make_config, open_net


@pytest.fixture
async def cnet(tmp_path: Any, monkeypatch: pytest.MonkeyPatch):
    config = make_config(tmp_path, checkpoint_interval_s=1, checkpoint_settle_s=0.5)
    async for n in open_net(monkeypatch, config):
        yield n


async def test_the_nodes_certify_checkpoints_compact_their_logs_and_agree(cnet: Net, tmp_path):
    created = [(await cnet.ok("n1", "POST", "/tasks", json={"title": f"t{i}", "reward": 1}))["id"] for i in range(8)]

    async def certified() -> bool:
        stats = [await cnet.ok(n, "GET", "/network/stats") for n in ("n1", "n2", "n3")]
        horizons = {s.get("checkpoint_horizon") for s in stats}
        return all(s["checkpoints_installed"] >= 1 for s in stats) and len(horizons) == 1

    await cnet.settle(certified, timeout=15)
    await cnet.ok("n2", "POST", "/tasks", json={"title": "after the checkpoint", "reward": 1})

    async def agreed() -> bool:
        states = [await cnet.ok(n, "GET", "/state") for n in ("n1", "n2", "n3")]
        shared = [(s["general"], s["global"]["nodes"], s["global"]["escrow_total"]) for s in states]
        return all(s == shared[0] for s in shared) and len(states[0]["general"]["tasks"]) == 9

    await cnet.settle(agreed, timeout=10)
    state = await cnet.ok("n3", "GET", "/state")
    assert set(created) <= set(state["general"]["tasks"])
    for node in ("n1", "n2", "n3"):
        stats = await cnet.ok(node, "GET", "/network/stats")
        assert stats["checkpoint_events_dropped"] > 0
        log = RecordLog(tmp_path / node / "events.log")
        assert len(log.records) == stats["events_in_log"] < 12  # genesis, 3 joins, 9 tasks were created
        log.close()
        assert (tmp_path / node / "checkpoint.json").exists()


async def test_a_new_node_loads_the_certified_checkpoint_from_a_peer_and_catches_up(cnet: Net, tmp_path):
    for i in range(5):
        await cnet.ok("n1", "POST", "/tasks", json={"title": f"t{i}", "reward": 1})
    network = cnet.app.state.component.network
    handles = dict(network.handles)

    async def compacted() -> bool:
        stats = [await cnet.ok(n, "GET", "/network/stats") for n in ("n1", "n2", "n3")]
        return all(s["checkpoint_events_dropped"] > 0 for s in stats)

    await cnet.settle(compacted, timeout=15)
    config = make_config(tmp_path, checkpoint_interval_s=1, checkpoint_settle_s=0.5)
    newcomer = TaskNode("n4", str(tmp_path / "n4"), config.actor_settings())
    try:
        await newcomer.connect(handles, dict(network.ids), network.ids["n1"])

        async def caught_up() -> bool:
            mine = (await newcomer.view("digest"))["result"]["digest"]
            theirs = [(await call(h, TaskNode.view, "digest"))["result"]["digest"] for h in handles.values()]
            return newcomer.core.stats["checkpoints_installed"] >= 1 and set(theirs) == {mine}

        await cnet.settle(caught_up, timeout=15)
        assert newcomer.core.reducer.horizon > 0
        assert len(newcomer.core.state["channels"]["general"]["tasks"]) >= 5
    finally:
        await newcomer.stop()


@pytest.mark.parametrize("field,value", [("checkpoint_interval_s", 0), ("checkpoint_settle_s", -1)])
def test_a_checkpoint_setting_out_of_range_is_refused(tmp_path, field, value):
    with pytest.raises(ValidationError):
        make_config(tmp_path, **{field: value})
