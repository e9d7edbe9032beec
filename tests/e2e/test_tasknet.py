"""Tier 3: the 3-node demo task network through Serve at /tasknet/<node> (nodes are Ray actors)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets

from tests.e2e.conftest import needs_app
from tests.polling import eventually_sync

PREFIX = "/tasknet"
NODES = ("n1", "n2", "n3")


@pytest.fixture
def tn(cluster, http: httpx.Client) -> httpx.Client:
    needs_app(cluster, "tasknet")
    return http


@pytest.fixture
def tokens(cluster_secrets) -> dict[str, dict[str, str]]:
    pairs = dict(item.split(":", 1) for item in cluster_secrets["TASKNET_NODE_TOKENS"].split(","))
    return {n: {"X-Node-Token": pairs[n]} for n in NODES}


def wait_for(check, timeout: float = 30.0):
    return eventually_sync(check, timeout=timeout, interval=0.1, what="the network converged")


def test_three_nodes_with_their_own_identity(tn: httpx.Client):
    ids = {n: tn.get(f"{PREFIX}/{n}/whoami").json()["node_id"] for n in NODES}
    assert len(set(ids.values())) == 3
    assert tn.get(f"{PREFIX}/whoami").json()["node_id"] == ids["n1"]
    health = tn.get(f"{PREFIX}/health").json()
    assert health["status"] == "ok"
    state = wait_for(lambda: (s := tn.get(f"{PREFIX}/n3/state").json()) and len(s["global"]["nodes"]) == 3 and s)
    assert set(state["global"]["nodes"]) == set(ids.values())
    assert "Task network node" in tn.get(f"{PREFIX}/n2/").text


def test_a_task_is_paid_across_nodes_and_streamed(tn: httpx.Client, tokens, serve_url):
    assert tn.post(f"{PREFIX}/n1/tasks", json={"title": "x"}).status_code == 401
    ws_url = serve_url.replace("http://", "ws://") + f"{PREFIX}/n3/ws"

    async def listen() -> dict:
        async with websockets.connect(ws_url) as ws:
            assert json.loads(await ws.recv())["type"] == "connected"
            await ws.send(json.dumps({"type": "subscribe", "channel": "general"}))
            assert json.loads(await ws.recv())["type"] == "subscribed"
            created = await asyncio.to_thread(
                tn.post, f"{PREFIX}/n1/tasks", json={"title": "e2e task", "reward": 50}, headers=tokens["n1"]
            )
            assert created.status_code == 200, created.text
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["type"] == "task_created":
                    return {"event": message, "task": created.json()}

    got = asyncio.run(listen())
    task = got["task"]
    assert got["event"]["data"]["task_id"] == task["id"] and got["event"]["data"]["title"] == "e2e task"
    wait_for(lambda: tn.post(f"{PREFIX}/n2/tasks/{task['id']}/claim", headers=tokens["n2"]).status_code == 200)
    submitted = tn.post(f"{PREFIX}/n2/tasks/{task['id']}/complete", headers=tokens["n2"])
    assert submitted.status_code == 200 and submitted.json()["status"] == "submitted"
    accepted = wait_for(
        lambda: (r := tn.post(f"{PREFIX}/n1/tasks/{task['id']}/accept", headers=tokens["n1"])).status_code == 200 and r
    )
    assert accepted.json()["reward_transferred"] == 49 and accepted.json()["tax_collected"] == 1
    n2_id = tn.get(f"{PREFIX}/n2/whoami").json()["node_id"]
    wait_for(
        lambda: tn.get(f"{PREFIX}/n3/state").json()["general"]["tasks"].get(task["id"], {}).get("status") == "completed"
    )
    assert tn.get(f"{PREFIX}/n3/state").json()["global"]["nodes"][n2_id]["reputation"]["_total"] >= 5


def test_config_change_ratified_through_raft_on_every_node(tn: httpx.Client, tokens):
    body = {
        "title": "voting period 2h",
        "proposal_type": "config_change",
        "params": {"key": "proposal_voting_period", "value": 7200},
    }
    prop = tn.post(f"{PREFIX}/n1/proposals", json=body, headers=tokens["n1"])
    assert prop.status_code == 200, prop.text
    pid = prop.json()["id"]
    for node in NODES:
        wait_for(
            lambda node=node: (
                tn.post(f"{PREFIX}/{node}/proposals/{pid}/vote", json={"vote": "yes"}, headers=tokens[node]).status_code
                == 200
            )
        )
    closing = wait_for(  # after the voting period (10 s in these tests)
        lambda: (r := tn.post(f"{PREFIX}/n1/proposals/{pid}/close", headers=tokens["n1"])).status_code == 200 and r
    )
    closed = closing.json()
    assert (
        closed["result"] == "approved"
        and closed["quorum_reached"] is True
        and closed["yes_votes"] >= 3.0
        and closed["no_votes"] == 0
    )
    wait_for(lambda: tn.get(f"{PREFIX}/n2/proposals/{pid}/details").json()["status"] == "pending_ratification")
    ratified = tn.post(f"{PREFIX}/n2/governance/ratify/{pid}", headers=tokens["n2"])
    assert ratified.status_code == 200 and ratified.json()["executed"] is True
    for node in NODES:
        wait_for(lambda node=node: tn.get(f"{PREFIX}/{node}/config").json()["proposal_voting_period"] == 7200)
    assert tn.get(f"{PREFIX}/n3/config/history").json()["changes"][-1]["changed_by"] == pid


def test_nodes_talk_over_webrtc_data_channels(tn: httpx.Client):
    def all_open():
        conns = [c for n in NODES for c in tn.get(f"{PREFIX}/{n}/webrtc/connections").json()["connections"]]
        return len(conns) == 6 and all(c["data_channel_state"] == "open" for c in conns)

    wait_for(all_open, timeout=60)
    metrics = tn.get(f"{PREFIX}/n1/webrtc/ice-metrics").json()["metrics"]
    assert all(m["selected_pair"]["local"].startswith("host 127.0.0.1:") for m in metrics)


def test_errors_have_the_spec_shape(tn: httpx.Client, tokens):
    r = tn.post(f"{PREFIX}/n1/tasks/none/claim", headers=tokens["n1"])
    assert r.status_code == 404 and set(r.json()) == {"detail"}
    r = tn.post(f"{PREFIX}/n1/tasks", json={"title": ""}, headers=tokens["n1"])
    assert r.status_code == 400
    r = tn.post(f"{PREFIX}/n1/tasks", json={"title": "x"}, headers=tokens["n2"])
    assert r.status_code == 403
