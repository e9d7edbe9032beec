"""The agent (through the LLM gateway's upstream double), signed upgrades and the evolution engine."""

from __future__ import annotations

import base64
import io
import zipfile

import httpx
import pytest

from actors.tasknet.agent import parse_actions
from deployments.tasknet.routes.agent import _execute
from tests.deployments.llm_gateway.conftest import start_double
from tests.deployments.tasknet.conftest import Net, make_config, open_net

LLM_KEY = "sk-test-" + "k" * 24


@pytest.fixture(scope="module")
def double():
    d = start_double("tn", keys=LLM_KEY)
    yield d
    d.stop()


@pytest.fixture
async def llm_net(tmp_path, monkeypatch, double):
    monkeypatch.setenv("TASKNET_TEST_LLM_KEY", LLM_KEY)
    config = make_config(
        tmp_path,
        llm={
            "base_url": f"http://127.0.0.1:{double.port}/v1",
            "api_key_env": "TASKNET_TEST_LLM_KEY",
            "model": "gpt-4o-mini",
        },
    )
    async for n in open_net(monkeypatch, config):
        yield n


def package(files: dict[str, str]) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return base64.b64encode(buf.getvalue()).decode()


GOOD = {
    "fastsum.py": "def total(values):\n    return sum(values)\n",
    "test_fastsum.py": "import unittest\nimport fastsum\n\n\nclass T(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(fastsum.total([1, 2]), 3)\n",
}


async def test_agent_prompt_reaches_the_gateway_and_prose_yields_no_action(llm_net: Net, double):
    out = await llm_net.ok("n1", "POST", "/agent/prompt", json={"prompt": "find work"})
    assert out["actions_generated"] == 0 and out["actions_executed"] == []
    assert "upstream" in out["raw_llm_response"] and out["prompt"] == "find work"
    seen = httpx.get(f"http://127.0.0.1:{double.port}/_double/requests").json()
    last = seen["requests"][-1] if isinstance(seen, dict) else seen[-1]
    assert LLM_KEY in str(last)
    status = await llm_net.ok("n1", "GET", "/agent/status")
    assert status["enabled"] is True and status["model_loaded"] is True


async def test_agent_without_gateway_is_unavailable(net: Net):
    r = await net.req("n1", "POST", "/agent/prompt", json={"prompt": "x"})
    assert r.status_code == 503 and "LLM" in r.json()["detail"]


async def test_agent_actions_run_through_the_node_api_with_its_token(net: Net):
    task = await net.ok("n2", "POST", "/tasks", json={"title": "for the agent", "reward": 5})

    async def known() -> bool:
        return task["id"] in str(await net.ok("n1", "GET", "/state"))

    await net.settle(known)
    text = (
        'Plan: [{"action": "claim_task", "params": {"task_id": "' + task["id"] + '"}, "reasoning": "reward"},'
        ' {"action": "drop_database", "params": {}}, {"action": "complete_task", "params": {"task_id": "../x"}}]'
    )
    actions = parse_actions(text)
    assert [a["action"] for a in actions] == ["claim_task", "complete_task"]
    node_app = next(r.app for r in net.app.routes if getattr(r, "path", "") == "/n1")
    executed = await _execute(node_app, node_app.state.component.token(), actions)
    assert [a["status"] for a in executed] == ["executed", "invalid"]
    assert parse_actions("no json here") == []
    # the creator's side of the escrow lifecycle is an action too
    review = parse_actions('{"action": "dispute_task", "params": {"task_id": "t1", "reason": "no tests"}}')
    assert review == [{"action": "dispute_task", "params": {"task_id": "t1", "reason": "no tests"}, "reasoning": ""}]


async def test_objectives(net: Net):
    body = {"maximize_sp": 0.2, "build_reputation": 0.5, "contribute_to_network": 0.3, "focus_areas": ["docs"]}
    out = await net.ok("n1", "POST", "/agent/objectives", json=body)
    assert out["objectives"] == body
    got = await net.ok("n1", "GET", "/agent/objectives")
    assert got["objectives"] == body and "stats" in got
    assert (await net.req("n1", "POST", "/agent/objectives", json={**body, "maximize_sp": 3})).status_code == 400


async def test_upgrade_tested_ratified_applied_and_rolled_back(net: Net):
    proposed = await net.ok("n1", "POST", "/upgrades/propose", json={"version": "1.1.0", "package_b64": package(GOOD)})
    pid = proposed["proposal_id"]
    assert len(proposed["package_hash"]) == 64 and proposed["version"] == "1.1.0"
    tested = await net.ok("n1", "POST", f"/upgrades/{pid}/test")
    results = tested["test_results"]
    assert (
        results["syntax_valid"]
        and results["security_checks"]["passed"]
        and results["performance_impact"]["tests_passed"]
    )
    status = await net.ok("n1", "GET", "/upgrades/status")
    assert status["active_upgrades"][0]["status"] == "tested" and status["active_upgrades"][0]["progress"] == 100
    for node in ("n1", "n2", "n3"):

        async def voted(node=node) -> bool:
            return (await net.req(node, "POST", f"/proposals/{pid}/vote", json={"vote": "yes"})).status_code == 200

        await net.settle(voted)
    await net.close("n1", pid)
    assert (await net.ok("n1", "POST", f"/governance/ratify/{pid}"))["executed"] is True
    history = await net.ok("n1", "GET", "/upgrades/history")
    assert [(u["version"], u["status"]) for u in history["upgrades"]] == [("1.1.0", "applied")]

    async def installed_everywhere() -> bool:
        for node in ("n2", "n3"):  # they never called ratify or test: each tests and installs it itself
            upgrades = (await net.ok(node, "GET", "/upgrades/history"))["upgrades"]
            if [(u["version"], u["status"]) for u in upgrades] != [("1.1.0", "applied")]:
                return False
        return True

    await net.settle(installed_everywhere, timeout=30)
    rolled = await net.ok("n1", "POST", f"/upgrades/{pid}/rollback")
    assert rolled["restored_version"] == "base"
    assert (await net.req("n1", "POST", f"/upgrades/{pid}/rollback")).status_code == 404


async def test_unsafe_or_broken_packages_fail_their_tests(net: Net):
    bad_import = await net.ok(
        "n1", "POST", "/upgrades/propose", json={"version": "2", "package_b64": package({"m.py": "import os\n"})}
    )
    res = (await net.ok("n1", "POST", f"/upgrades/{bad_import['proposal_id']}/test"))["test_results"]
    assert res["security_checks"]["passed"] is False and "import os" in res["security_checks"]["violations"][0]
    broken = await net.ok(
        "n1", "POST", "/upgrades/propose", json={"version": "3", "package_b64": package({"m.py": "def (:\n"})}
    )
    res = (await net.ok("n1", "POST", f"/upgrades/{broken['proposal_id']}/test"))["test_results"]
    assert res["syntax_valid"] is False
    failing = await net.ok(
        "n1",
        "POST",
        "/upgrades/propose",
        json={
            "version": "4",
            "package_b64": package(
                {
                    "test_x.py": "import unittest\n\nclass T(unittest.TestCase):\n    def test(self):\n        self.fail()\n"
                }
            ),
        },
    )
    res = (await net.ok("n1", "POST", f"/upgrades/{failing['proposal_id']}/test"))["test_results"]
    assert res["performance_impact"]["tests_passed"] is False
    traversal = await net.req(
        "n1", "POST", "/upgrades/propose", json={"version": "5", "package_b64": package({"../evil.py": "x = 1\n"})}
    )
    assert traversal.status_code == 400 and "relative .py path" in traversal.json()["detail"]
    r = await net.req(
        "n1", "POST", "/upgrades/propose", json={"version": "6", "package_b64": package(GOOD), "package_hash": "0" * 64}
    )
    assert r.status_code == 400 and "sha256" in r.json()["detail"]


async def test_evolution_finds_real_inefficiencies_and_files_generated_code(llm_net: Net):
    task = await llm_net.ok("n1", "POST", "/tasks", json={"title": "t", "reward": 1})
    assert task["id"]
    node = llm_net.app.state.component.network.handles["n2"]
    await node.receive_events.remote([{"author": "forged", "type": "task_create"}], "n1")
    analysis = await llm_net.ok("n2", "POST", "/evolution/analyze")
    kinds = {i["type"] for i in analysis["inefficiencies"]}
    assert "invalid_events" in kinds and analysis["inefficiencies_found"] == len(analysis["inefficiencies"])
    issue = next(i for i in analysis["inefficiencies"] if i["type"] == "invalid_events")
    r = await llm_net.req(
        "n2", "POST", "/evolution/generate", json={"inefficiency_id": issue["id"], "language": "rust"}
    )
    assert r.status_code == 400
    gen = await llm_net.ok(
        "n2",
        "POST",
        "/evolution/generate",
        json={"inefficiency_id": issue["id"], "language": "python", "target_component": "gossip"},
    )
    assert gen["language"] == "python" and "upstream" in gen["code"]
    filed = await llm_net.ok(
        "n2",
        "POST",
        "/evolution/propose",
        json={"title": "harden gossip", "generated_code_id": gen["generated_code_id"], "rationale": "r"},
    )
    assert filed["requires_community_vote"] is True
    tested = await llm_net.ok("n2", "POST", f"/upgrades/{filed['proposal_id']}/test")
    assert tested["test_results"]["syntax_valid"] is False  # the double's prose is not Python
    status = await llm_net.ok("n2", "GET", "/evolution/status")
    assert status["enabled"] and status["last_analysis"] and status["pending_evolutions"] == 0
