"""Validator set changes through the API with the real node actors (local mode): n1..n3 are the
genesis validators, n4 joins as a plain node; a validator_change proposal adds n4 (it catches up as a
Raft learner, then counts), another removes n1, and the new set ratifies on its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.deployments.tasknet.conftest import Net, make_config, open_net

NODES = ["n1", "n2", "n3", "n4"]


@pytest.fixture
async def net4(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Net]:
    # a snapshot after every applied entry: compaction all along, and n4 catches up from a snapshot
    config = make_config(
        tmp_path, nodes=NODES, validators=["n1", "n2", "n3"], ratify_timeout_s=20, raft_snapshot_entries=1
    )
    async for n in open_net(monkeypatch, config):
        yield n


async def _decided(net: Net, params: dict[str, Any], voters: list[str]) -> str:
    body = {"title": f"{params['action']} {params['node_id']}", "proposal_type": "validator_change"}
    pid = (await net.ok("n2", "POST", "/proposals", json={**body, "params": params}))["id"]
    for node in voters:

        async def voted(node: str = node) -> bool:
            return (await net.req(node, "POST", f"/proposals/{pid}/vote", json={"vote": "yes"})).status_code == 200

        await net.settle(voted)
    assert (await net.close("n2", pid))["result"] == "approved"
    return pid


async def _change(net: Net, action: str, node: str) -> dict[str, Any]:
    me = await net.ok(node, "GET", "/whoami")
    return {"action": action, "node_id": me["node_id"], "public_key": me["public_key"]}


async def _validators_everywhere(net: Net, expected: list[str]) -> None:
    want = sorted(net.ids[n] for n in expected)

    async def agreed() -> bool:
        sets = [sorted((await net.ok(n, "GET", "/config"))["validator_set"]) for n in NODES]
        return all(s == want for s in sets)

    await net.settle(agreed, timeout=15)


async def test_a_validator_is_added_then_the_first_one_removed_and_the_new_set_ratifies(net4: Net):
    net = net4
    await _validators_everywhere(net, ["n1", "n2", "n3"])
    assert (await net.req("n4", "POST", "/governance/ratify/unknown")).status_code == 403  # not a validator
    bad = {"title": "sybil", "proposal_type": "validator_change", "params": {"action": "add", "node_id": "x"}}
    assert (await net.req("n4", "POST", "/proposals", json=bad)).status_code == 400

    add = await _decided(net, await _change(net, "add", "n4"), NODES)
    ratified = await net.ok("n3", "POST", f"/governance/ratify/{add}")
    assert ratified["executed"] is True
    await _validators_everywhere(net, NODES)
    assert (await net.ok("n4", "GET", "/health"))["raft_snapshot_index"] > 0  # installed from the leader

    remove = await _decided(net, await _change(net, "remove", "n1"), NODES)
    assert (await net.ok("n4", "POST", f"/governance/ratify/{remove}"))["executed"] is True  # n4 now ratifies
    await _validators_everywhere(net, ["n2", "n3", "n4"])

    tax = {"key": "task_completion_tax", "value": 0.07}
    body = {"title": "tax", "proposal_type": "config_change", "params": tax}
    pid = (await net.ok("n2", "POST", "/proposals", json=body))["id"]
    for node in NODES:

        async def voted(node: str = node) -> bool:
            return (await net.req(node, "POST", f"/proposals/{pid}/vote", json={"vote": "yes"})).status_code == 200

        await net.settle(voted)
    await net.close("n2", pid)
    assert (await net.ok("n3", "POST", f"/governance/ratify/{pid}"))["executed"] is True
    details = await net.ok("n2", "GET", f"/proposals/{pid}/details")
    assert details["status"] == "executed"
    state = (await net.ok("n2", "GET", "/state"))["global"]
    last = state["ratified"][-1]
    assert last["proposal_id"] == pid and net.ids["n1"] not in last["signers"] and len(last["signers"]) >= 2
    epochs = [(e["proposal_id"], sorted(e["validators"])) for e in state["validator_history"]]
    assert epochs == [
        (None, sorted(net.ids[n] for n in ["n1", "n2", "n3"])),
        (add, sorted(net.ids[n] for n in NODES)),
        (remove, sorted(net.ids[n] for n in ["n2", "n3", "n4"])),
    ]
    history = (await net.ok("n3", "GET", "/config/history"))["changes"]
    assert [c["changed_by"] for c in history if c["key"] == "validator_set"] == [add, remove]
    assert (await net.ok("n1", "GET", "/health"))["raft_role"] != "leader"


def test_the_validators_setting_names_configured_nodes_only(tmp_path: Any):
    with pytest.raises(ValueError, match="validator n9 is not one of nodes"):
        make_config(tmp_path, nodes=NODES, validators=["n1", "n9"])
    with pytest.raises(ValueError):
        make_config(tmp_path, network={"min_validators": 0})
    for bad in (0, -1, 10_000_001):
        with pytest.raises(ValueError):
            make_config(tmp_path, raft_snapshot_entries=bad)
