"""Proposals, public and anonymous votes, close, ratification through Raft, config changes,
schemas and shared tools (sealed credentials, billed to the treasury)."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from tests.deployments.tasknet.conftest import Net, accept


async def _status(net: Net, node: str, method: str, path: str, **kw) -> int:
    return (await net.req(node, method, path, **kw)).status_code


async def propose(net: Net, body: dict) -> str:
    prop = await net.ok("n1", "POST", "/proposals", json=body)
    assert prop["status"] == "open" and prop["proposer"] == net.ids["n1"] and prop["votes"] == {}

    async def everywhere() -> bool:
        codes = [await _status(net, n, "GET", f"/proposals/{prop['id']}/details") for n in ("n2", "n3")]
        return codes == [200, 200]

    await net.settle(everywhere)
    return prop["id"]


async def test_public_and_anonymous_votes_then_close(net: Net):
    pid = await propose(net, {"title": "adopt the style guide", "proposal_type": "generic", "tags": ["docs"]})
    v = await net.ok("n2", "POST", f"/proposals/{pid}/vote", json={"vote": "yes"})
    assert v == {"message": "vote recorded", "proposal_id": pid, "voter": net.ids["n2"], "vote": "yes"}
    assert await _status(net, "n2", "POST", f"/proposals/{pid}/vote", json={"vote": "no"}) == 400
    anon = await net.ok("n3", "POST", f"/proposals/{pid}/vote", json={"vote": "no", "anonymous": True})
    assert anon["voter"] == "anonymous"
    # it enters the network through another node, after a delay: the voter's node is not its first gossiper
    assert anon["relayed_through"] in ("n1", "n2")
    assert anon["relay_hops"] == 1 and anon["exit_relay"] is None  # 2 peers: one hop, and the answer says so
    stats = await net.ok(anon["relayed_through"], "GET", "/network/stats")
    assert stats["anonymous_votes_relayed"] == 1
    again = await net.req("n3", "POST", f"/proposals/{pid}/vote", json={"vote": "no", "anonymous": True})
    assert again.status_code == 403 and "nullifier" in again.json()["detail"]
    proof = (await net.ok("n1", "GET", f"/zkp/generate_proof?proposal_id={pid}&vote=yes"))["proof"]
    assert set(proof) == {"commitment", "challenge", "response", "tier", "tier_weight"}
    forged = {**proof, "challenge": "1" * 64}
    r = await net.req(
        "n1", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True, "zkp_proof": forged}
    )
    assert r.status_code == 403
    wrong_tier = {**proof, "tier": "expert", "tier_weight": 2.0}
    r = await net.req(
        "n1", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True, "zkp_proof": wrong_tier}
    )
    assert r.status_code == 403
    # A proof made for "yes" cannot carry a "no" vote.
    r = await net.req(
        "n1", "POST", f"/proposals/{pid}/vote", json={"vote": "no", "anonymous": True, "zkp_proof": proof}
    )
    assert r.status_code == 403
    assert (
        await net.req(
            "n1", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True, "zkp_proof": proof}
        )
    ).status_code == 200

    async def all_votes() -> bool:
        d = await net.ok("n1", "GET", f"/proposals/{pid}/details")
        return len(d["anonymous_votes"]) == 2 and net.ids["n2"] in d["votes"]

    await net.settle(all_votes)
    early = await net.req("n2", "POST", f"/proposals/{pid}/close")
    assert early.status_code == 403 and "voting period" in early.json()["detail"]
    closed = await net.close("n1", pid)
    assert closed["result"] == "approved" and closed["yes_votes"] == 2.0 and closed["no_votes"] == 1.0
    details = await net.ok("n1", "GET", f"/proposals/{pid}/details")
    assert details["status"] == "closed" and details["closed_at"] is not None
    assert await _status(net, "n1", "POST", f"/proposals/{pid}/vote", json={"vote": "yes"}) == 400


async def test_config_change_is_ratified_through_raft_by_validators_only(net: Net):
    pid = await propose(
        net,
        {
            "title": "raise the tax",
            "proposal_type": "config_change",
            "params": {"key": "task_completion_tax", "value": 0.05},
        },
    )
    for node in ("n1", "n2"):
        await net.settle(
            lambda node=node: _code(net, node, "POST", f"/proposals/{pid}/vote", 200, json={"vote": "yes"})
        )
    assert await _status(net, "n2", "POST", f"/governance/ratify/{pid}") == 400  # still open
    await net.close("n1", pid)
    await net.settle(lambda: _detail_status(net, "n3", pid, "pending_ratification"))
    ratified = await net.ok("n3", "POST", f"/governance/ratify/{pid}")
    assert ratified["executed"] is True and ratified["proposal_id"] == pid

    async def applied_everywhere() -> bool:
        configs = [await net.ok(n, "GET", "/config") for n in ("n1", "n2", "n3")]
        return all(c["task_completion_tax"] == 0.05 for c in configs)

    await net.settle(applied_everywhere)
    history = await net.ok("n2", "GET", "/config/history")
    assert history["changes"] == [
        {
            "key": "task_completion_tax",
            "old_value": 0.02,
            "new_value": 0.05,
            "changed_at": history["changes"][0]["changed_at"],
            "changed_by": pid,
        }
    ]
    assert await _status(net, "n1", "POST", f"/governance/ratify/{pid}") == 400  # applied once
    config = await net.ok("n1", "GET", "/config")
    assert sorted(config["validator_set"]) == sorted(net.ids.values())


async def test_invalid_proposals_are_refused(net: Net):
    r = await net.req(
        "n1",
        "POST",
        "/proposals",
        json={"title": "x", "proposal_type": "config_change", "params": {"key": "faucet_sp", "value": 10**6}},
    )
    assert r.status_code == 400
    r = await net.req("n1", "POST", "/proposals", json={"title": "x", "proposal_type": "teleport"})
    assert r.status_code == 400
    assert await _status(net, "n1", "GET", "/proposals/missing/details") == 404


async def test_schemas(net: Net):
    listing = await net.ok("n1", "GET", "/schemas")
    assert set(listing["schemas"]) == {"task_v1", "task_v2", "proposal_v1"}
    assert (await net.ok("n1", "GET", "/schemas/task_v2"))["version"] == 2
    assert await _status(net, "n1", "GET", "/schemas/nope") == 404
    ok = await net.ok(
        "n1", "POST", "/schemas/validate", json={"schema_name": "task_v1", "data": {"title": "t", "reward": 3}}
    )
    assert ok == {"valid": True, "errors": []}
    bad = await net.ok("n1", "POST", "/schemas/validate", json={"schema_name": "task_v1", "data": {"reward": True}})
    assert bad["valid"] is False and len(bad["errors"]) == 2


class _ToolServer(BaseHTTPRequestHandler):
    seen: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _ToolServer.seen.append((self.headers.get("Authorization"), body))
        payload = json.dumps({"echo": body}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        return


async def test_tool_acquired_sealed_and_executed_billed_to_treasury(net: Net):
    server = HTTPServer(("127.0.0.1", 0), _ToolServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        # fund the treasury with taxes: 5 tasks of 100 SP pay 2 SP each
        for i in range(5):
            task = await net.ok("n1", "POST", "/tasks", json={"title": f"fund {i}", "reward": 100})
            await net.settle(lambda t=task: _code(net, "n2", "POST", f"/tasks/{t['id']}/claim", 200))
            await net.ok("n2", "POST", f"/tasks/{task['id']}/complete")
            await accept(net, task["id"])
        secret = "sk-tool-" + "z" * 24
        command = {
            "operation": "acquire_common_tool",
            "params": {
                "channel": "general",
                "tool_id": "echo",
                "description": "echo service",
                "type": "api_key",
                "monthly_cost_sp": 3,
                "execution_cost_sp": 1,
                "endpoint": f"http://127.0.0.1:{server.server_port}/run",
                "credentials_to_encrypt": secret,
            },
        }
        pid = await propose(net, {"title": "buy echo", "proposal_type": "command", "command": command})
        for node in ("n1", "n2", "n3"):
            await net.settle(
                lambda node=node: _code(net, node, "POST", f"/proposals/{pid}/vote", 200, json={"vote": "yes"})
            )
        await net.close("n1", pid)
        await net.settle(lambda: _detail_status(net, "n2", pid, "pending_ratification"))
        assert (await net.ok("n2", "POST", f"/governance/ratify/{pid}"))["executed"] is True
        for node in ("n1", "n2", "n3"):
            state_text = (await net.req(node, "GET", "/state")).text
            assert secret not in state_text and "credentials_sealed" not in state_text
        job = await net.ok("n1", "POST", "/tasks", json={"title": "use echo", "reward": 10, "required_tools": ["echo"]})
        await net.settle(lambda: _code(net, "n3", "POST", f"/tasks/{job['id']}/claim", 200))
        assert await _status(net, "n2", "POST", f"/tools/echo/execute?task_id={job['id']}", json={"q": 1}) == 403
        before = (await net.ok("n3", "GET", "/treasury/general"))["balance"]
        result = await net.ok("n3", "POST", f"/tools/echo/execute?task_id={job['id']}", json={"q": 1})
        assert result == {"result": {"echo": {"q": 1}}, "tool_id": "echo", "execution_cost_sp": 1}
        assert _ToolServer.seen[-1] == (f"Bearer {secret}", {"q": 1})
        assert (await net.ok("n3", "GET", "/treasury/general"))["balance"] == before - 1
    finally:
        server.shutdown()


async def _code(net: Net, node: str, method: str, path: str, expected: int, **kw) -> bool:
    return (await net.req(node, method, path, **kw)).status_code == expected


async def _detail_status(net: Net, node: str, pid: str, status: str) -> bool:
    r = await net.req(node, "GET", f"/proposals/{pid}/details")
    return r.status_code == 200 and r.json()["status"] == status


async def test_raft_http_messages_must_be_signed(net: Net):
    r = await net.req(
        "n1",
        "POST",
        "/raft/request_vote",
        json={"term": 99, "candidate_id": net.ids["n2"], "last_log_index": 0, "last_log_term": 0},
    )
    assert r.status_code == 403
    r = await net.req("n1", "POST", "/raft/append_entries", json={"term": 1})
    assert r.status_code == 400
    await asyncio.sleep(0)  # one event-loop turn, not a wait for time


async def test_the_proposer_withdraws_and_nobody_else(net: Net):
    pid = await propose(net, {"title": "never mind", "proposal_type": "generic"})
    assert await _status(net, "n2", "POST", f"/proposals/{pid}/withdraw") == 403
    withdrawn = await net.ok("n1", "POST", f"/proposals/{pid}/withdraw")
    assert withdrawn == {"message": "proposal withdrawn", "proposal_id": pid, "status": "withdrawn"}
    await net.settle(lambda: _detail_status(net, "n3", pid, "withdrawn"))
    assert await _status(net, "n3", "POST", f"/proposals/{pid}/vote", json={"vote": "yes"}) == 400
