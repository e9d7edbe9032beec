"""Tasks, auctions, composite tasks and skills through the HTTP API of a 3-node network."""

from __future__ import annotations

from tests.deployments.tasknet.conftest import Net, accept


async def balance(net: Net, viewer: str, node: str) -> int:
    state = await net.ok(viewer, "GET", "/state")
    return state["global"]["nodes"][net.ids[node]]["balance"]


async def test_whoami_and_node_base_urls(net: Net):
    me = await net.ok("n2", "GET", "/whoami")
    assert set(me) >= {"node_id", "public_key"} and me["node_id"] == net.ids["n2"]
    root = (await net.client.get("/whoami")).json()
    assert root["node_id"] == net.ids["n1"]


async def test_writes_need_the_node_token(net: Net):
    r = await net.req("n1", "POST", "/tasks", auth=False, json={"title": "x"})
    assert r.status_code == 401 and "detail" in r.json()
    r = await net.client.post("/n1/tasks", json={"title": "x"}, headers={"X-Node-Token": "t2-" + "b" * 40})
    assert r.status_code == 403
    assert (await net.req("n1", "GET", "/state", auth=False)).status_code == 200


async def test_task_lifecycle_pays_the_assignee_minus_tax_and_streams_events(net: Net):
    task = await net.ok("n1", "POST", "/tasks", json={"title": "index the docs", "reward": 100, "tags": ["docs"]})
    assert set(task) >= {"id", "title", "status", "creator", "reward", "created_at"}
    assert task["status"] == "open" and task["creator"] == net.ids["n1"]

    async def seen() -> bool:
        return (await net.req("n2", "GET", "/proposals/none/details")).status_code == 404 and task["id"] in str(
            (await net.ok("n2", "GET", "/state"))["general"]["tasks"]
        )

    await net.settle(seen)
    claim = await net.ok("n2", "POST", f"/tasks/{task['id']}/claim")
    assert claim == {"message": "task claimed", "task_id": task["id"], "assignee": net.ids["n2"]}
    r = await net.req("n3", "POST", f"/tasks/{task['id']}/progress", json={"progress_note": "x"})
    assert r.status_code in (403, 404)
    await net.ok("n2", "POST", f"/tasks/{task['id']}/progress", json={"progress_note": "half"})
    submitted = await net.ok("n2", "POST", f"/tasks/{task['id']}/complete")
    assert submitted["status"] == "submitted" and submitted["reward_transferred"] == 0
    assert (await net.req("n2", "POST", f"/tasks/{task['id']}/accept")).status_code == 403  # not the creator
    done = await accept(net, task["id"])
    assert done["reward_transferred"] == 98 and done["tax_collected"] == 2 and done["accepted_by"] == "creator"

    async def paid() -> bool:
        return await balance(net, "n3", "n2") == 1098

    await net.settle(paid)
    treasury = await net.ok("n3", "GET", "/treasury/general")
    assert treasury == {"channel_id": "general", "balance": 2, "reserved": 0, "available": 2}
    assert (await net.ok("n1", "GET", "/treasuries"))["treasuries"]["general"] == 2


async def test_task_errors_follow_the_error_table(net: Net):
    r = await net.req("n1", "POST", "/tasks", json={"title": ""})
    assert r.status_code == 400 and r.json()["detail"].startswith("validation error")
    r = await net.req("n1", "POST", "/tasks", json={"title": "x", "reward": 5000})
    assert r.status_code == 400 and "insufficient balance" in r.json()["detail"]
    r = await net.req("n1", "POST", "/tasks/nope/claim")
    assert r.status_code == 404
    task = await net.ok("n1", "POST", "/tasks", json={"title": "mine", "reward": 10})
    r = await net.req("n1", "POST", f"/tasks/{task['id']}/claim")
    assert r.status_code == 403
    r = await net.client.post("/n1/tasks", content=b"x" * 300_000, headers={"X-Node-Token": "t1-" + "a" * 40})
    assert r.status_code == 413  # over max_body_bytes (the platform's body cap)


async def test_delete_only_by_creator_and_only_unclaimed(net: Net):
    task = await net.ok("n1", "POST", "/tasks", json={"title": "tmp", "reward": 40})

    async def known() -> bool:
        return (await net.req("n2", "DELETE", f"/tasks/{task['id']}")).status_code == 403

    await net.settle(known)
    deleted = await net.ok("n1", "DELETE", f"/tasks/{task['id']}")
    assert deleted == {"message": "task deleted; escrow refunded", "task_id": task["id"]}
    assert await balance(net, "n1", "n1") == 1000


async def test_auction_bid_and_select(net: Net):
    task = await net.ok(
        "n1",
        "POST",
        "/tasks",
        json={"title": "auction", "enable_auction": True, "max_reward": 300, "schema_name": "task_v2"},
    )

    async def bid_ok() -> bool:
        return (
            await net.req("n2", "POST", f"/tasks/{task['id']}/bid", json={"amount": 250, "estimated_days": 2})
        ).status_code == 200

    await net.settle(bid_ok)
    r = await net.req("n1", "POST", f"/tasks/{task['id']}/select_bid", json={"bidder_id": "nobody"})
    assert r.status_code in (404, 200)

    async def selected() -> bool:
        r = await net.req("n1", "POST", f"/tasks/{task['id']}/select_bid", json={"bidder_id": net.ids["n2"]})
        return r.status_code == 200 and r.json()["winner"] == net.ids["n2"] and r.json()["task_status"] == "claimed"

    await net.settle(selected)
    assert await balance(net, "n1", "n1") == 750
    r = await net.req("n2", "POST", f"/tasks/{task['id']}/select_bid", json={"bidder_id": net.ids["n2"]})
    assert r.status_code == 403


async def test_composite_team_formation_and_subtasks(net: Net):
    await net.ok("n2", "POST", "/skills/profile", json={"skills": ["python"], "bio": "backend"})
    await net.ok("n3", "POST", "/skills/profile", json={"skills": ["css"], "bio": "frontend"})
    comp = await net.ok(
        "n1",
        "POST",
        "/tasks/composite/create",
        json={
            "title": "website",
            "total_reward": 200,
            "required_team_size": 2,
            "subtasks": [
                {"title": "api", "required_skills": ["python"], "reward_percentage": 50},
                {"title": "ui", "required_skills": ["css"], "reward_percentage": 50},
            ],
        },
    )
    assert comp["status"] == "forming_team" and comp["workspace_channel"] == f"team-{comp['task_id']}"
    tid = comp["task_id"]

    async def applied() -> bool:
        a = await net.req("n2", "POST", f"/tasks/composite/{tid}/apply", json={"message": "hi"})
        return a.status_code == 200

    await net.settle(applied)
    await net.settle(lambda: _ok(net.req("n3", "POST", f"/tasks/composite/{tid}/claim")))
    await net.settle(lambda: _ok(net.req("n1", "POST", f"/tasks/composite/{tid}/accept/{net.ids['n2']}")))
    acc = await net.req("n1", "POST", f"/tasks/composite/{tid}/accept/{net.ids['n3']}")
    assert acc.status_code == 200 and acc.json()["team_size"] == 2 and acc.json()["required_size"] == 2
    detail = await net.ok("n1", "GET", f"/tasks/composite/{tid}")
    assert detail["status"] == "in_progress"
    assigned = {s["id"]: s["assignee"] for s in detail["subtasks"]}
    assert assigned == {"sub1": net.ids["n2"], "sub2": net.ids["n3"]}
    listing = await net.ok("n1", "GET", "/tasks/composite")
    assert listing["composite_tasks"][0]["team_size"] == 2
    await net.settle(lambda: _ok(net.req("n2", "POST", f"/tasks/composite/{tid}/subtask/sub1/complete")))

    async def last() -> bool:
        r = await net.req("n3", "POST", f"/tasks/composite/{tid}/subtask/sub2/complete")
        return r.status_code == 200 and r.json()["all_subtasks_complete"] is True

    await net.settle(last)
    profile = await net.ok("n2", "GET", "/skills/profile")
    assert profile == {"node_id": net.ids["n2"], "skills": ["python"], "bio": "backend"}
    assert "website" in (await net.client.get("/n1/")).text


async def _ok(response_coro) -> bool:
    return (await response_coro).status_code == 200


def test_websocket_streams_task_created_to_subscribers(tmp_path, monkeypatch):
    """Through a real WebSocket (Starlette's test client runs the app in its own loop)."""
    from starlette.testclient import TestClient

    from deployments.tasknet.app import create_app
    from rayfleet.state import local_state, reset_local_state
    from tests.deployments.tasknet.conftest import TOKENS, make_config

    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    with local_state():
        reset_local_state()
        app = create_app(make_config(tmp_path, ws_poll_s=0.1))
        with TestClient(app) as client:
            with client.websocket_connect("/n2/ws") as ws:
                assert ws.receive_json()["type"] == "connected"
                ws.send_json({"type": "subscribe", "channel": "general"})
                assert ws.receive_json() == {"type": "subscribed", "data": {"channel": "general"}}
                r = client.post(
                    "/n1/tasks", json={"title": "streamed", "reward": 1}, headers={"X-Node-Token": TOKENS["n1"]}
                )
                assert r.status_code == 200
                while True:
                    message = ws.receive_json()
                    if message["type"] == "task_created":
                        break
                assert message["data"]["task_id"] == r.json()["id"] and message["data"]["title"] == "streamed"
                ws.send_text("not json")
                assert ws.receive_json()["type"] == "error"
            client.portal.call(app.state.component.network.stop)
        reset_local_state()


async def test_dispute_then_accept_withdraw_a_bid_and_cancel_a_forming_team(net: Net):
    task = await net.ok("n1", "POST", "/tasks", json={"title": "review", "reward": 10})
    await net.settle(lambda: _claimed(net, task["id"]))
    await net.ok("n2", "POST", f"/tasks/{task['id']}/complete")

    async def disputed() -> bool:
        r = await net.req("n1", "POST", f"/tasks/{task['id']}/dispute", json={"reason": "missing tests"})
        return r.status_code == 200

    await net.settle(disputed)
    assert (await net.ok("n1", "GET", "/state"))["general"]["tasks"][task["id"]]["status"] == "claimed"
    assert (await net.req("n1", "POST", f"/tasks/{task['id']}/expire")).status_code == 400  # not yet
    auction = await net.ok("n1", "POST", "/tasks", json={"title": "a", "enable_auction": True, "max_reward": 30})

    async def bid() -> bool:
        r = await net.req("n3", "POST", f"/tasks/{auction['id']}/bid", json={"amount": 20, "estimated_days": 1})
        return r.status_code == 200

    await net.settle(bid)
    assert (await net.ok("n3", "DELETE", f"/tasks/{auction['id']}/bid"))["withdrawn"] is True
    assert (await net.req("n3", "DELETE", f"/tasks/{auction['id']}/bid")).status_code == 404
    subtasks = [{"title": "s", "required_skills": [], "reward_percentage": 100}]
    comp = await net.ok(
        "n1",
        "POST",
        "/tasks/composite/create",
        json={"title": "c", "total_reward": 40, "required_team_size": 2, "subtasks": subtasks},
    )
    cancelled = await net.ok("n1", "POST", f"/tasks/composite/{comp['task_id']}/cancel")
    assert cancelled["status"] == "cancelled"


async def _claimed(net: Net, task_id: str) -> bool:
    return (await net.req("n2", "POST", f"/tasks/{task_id}/claim")).status_code == 200
