"""Fixtures: a 3-node network in-process (local actor stand-ins) behind the real FastAPI app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from deployments.tasknet.app import create_app
from deployments.tasknet.config import TasknetConfig
from rayfleet.state import local_state, reset_local_state
from tests.polling import eventually

VOTING_PERIOD_S = 4  # long enough to vote in, short enough to wait for before closing
TOKENS = {"n1": "t1-" + "a" * 40, "n2": "t2-" + "b" * 40, "n3": "t3-" + "c" * 40, "n4": "t4-" + "d" * 40}


def headers(node: str) -> dict[str, str]:
    return {"X-Node-Token": TOKENS[node]}


class Net:
    def __init__(self, client: httpx.AsyncClient, app: Any) -> None:
        self.client = client
        self.app = app
        self.ids: dict[str, str] = {}

    async def req(self, node: str, method: str, path: str, *, auth: bool = True, **kw: Any) -> httpx.Response:
        sent = {**(headers(node) if auth else {}), **kw.pop("headers", {})}
        return await self.client.request(method, f"/{node}{path}", headers=sent, **kw)

    async def ok(self, node: str, method: str, path: str, **kw: Any) -> Any:
        response = await self.req(node, method, path, **kw)
        assert response.status_code == 200, response.text
        return response.json()

    async def close(self, node: str, pid: str) -> Any:
        """Close `pid` as soon as its voting period is over (nobody may close it earlier)."""
        answers: list[Any] = []

        async def closed() -> bool:
            response = await self.req(node, "POST", f"/proposals/{pid}/close")
            answers.append(response)
            return response.status_code == 200

        await eventually(closed, timeout=VOTING_PERIOD_S + 5, what="the end of the voting period")
        return answers[-1].json()

    async def settle(self, check: Any, timeout: float = 5.0) -> None:
        """Wait until `check()` (async) is true: gossip is asynchronous."""
        await eventually(check, timeout=timeout, what="network convergence")


async def accept(net: Net, task_id: str) -> Any:
    """The creator (n1) accepts a submitted completion once the submission reached it."""
    answers: list[Any] = []

    async def accepted() -> bool:
        response = await net.req("n1", "POST", f"/tasks/{task_id}/accept")
        answers.append(response)
        return response.status_code == 200

    await eventually(accepted, timeout=5, what="the submitted completion")
    return answers[-1].json()


def make_config(tmp_path: Any, **overrides: Any) -> TasknetConfig:
    base: dict[str, Any] = {
        "data_dir": tmp_path,
        "anti_entropy_interval_s": 0.1,
        "raft_tick_s": 0.02,
        "webrtc": {"enabled": False},
        "llm": {"base_url": None},
        "network": {"proposal_voting_period": VOTING_PERIOD_S},
        "anonymous_relay_max_delay_s": 0.3,
    }
    base.update(overrides)
    return TasknetConfig.model_validate(base)


async def open_net(monkeypatch: pytest.MonkeyPatch, config: TasknetConfig) -> AsyncIterator[Net]:
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    with local_state():
        reset_local_state()
        app = create_app(config)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://tasknet") as client:
            net = Net(client, app)
            for node in config.nodes:
                net.ids[node] = (await net.ok(node, "GET", "/whoami"))["node_id"]
            try:
                yield net
            finally:
                await app.state.component.network.stop()
                reset_local_state()


@pytest.fixture
async def net(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Net]:
    async for n in open_net(monkeypatch, make_config(tmp_path)):
        yield n
