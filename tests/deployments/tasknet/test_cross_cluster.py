"""Two clusters, one network: a 3-node and a 2-node deployment, each behind its own uvicorn on
loopback, connected only through the HTTP peer routes (through TCP proxies the test can cut).
The 2-node side pins the other's bootstrap node as its genesis author; an event on one side
reaches the other; a partition (the proxies cut) while both sides write, then the heal, and
all five nodes hold the same state digest."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from deployments.tasknet.app import create_app
from deployments.tasknet.config import TasknetConfig
from rayfleet.launcher import free_port
from rayfleet.state import local_state, reset_local_state
from tests.deployments.tasknet.conftest import make_config
from tests.deployments.tasknet.tcpproxy import TcpProxy
from tests.polling import eventually

TOKENS = {n: f"{n}-token-" + n * 20 for n in ("a1", "a2", "a3", "b1", "b2")}
SIDE_A, SIDE_B = ("a1", "a2", "a3"), ("b1", "b2")


@dataclass
class Served:
    config: TasknetConfig
    app: Any
    server: uvicorn.Server
    task: asyncio.Task[Any]


async def serve(config: TasknetConfig, port: int) -> Served:
    app = create_app(config)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started, timeout=10, what="uvicorn started")
    return Served(config, app, server, task)


class Fleet:
    """Five nodes on two servers; `node -> base URL` and the two proxies between the servers."""

    def __init__(self, client: httpx.AsyncClient, ports: dict[str, int], proxies: list[TcpProxy]) -> None:
        self.client, self.ports, self.proxies = client, ports, proxies

    def url(self, node: str, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[node]}/{node}{path}"

    async def get(self, node: str, path: str) -> Any:
        response = await self.client.get(self.url(node, path))
        assert response.status_code == 200, response.text
        return response.json()

    async def create_task(self, node: str, title: str) -> str:
        response = await self.client.post(
            self.url(node, "/tasks"), headers={"X-Node-Token": TOKENS[node]}, json={"title": title, "reward": 1}
        )
        assert response.status_code == 200, response.text
        return str(response.json()["id"])

    async def titles(self, node: str) -> set[str]:
        return {t["title"] for t in (await self.get(node, "/state"))["general"]["tasks"].values()}

    async def five_members(self) -> bool:
        states = [await self.get(n, "/state") for n in SIDE_A + SIDE_B]
        return all(len(s["global"]["nodes"]) == 5 for s in states)

    async def digests(self, nodes: tuple[str, ...] = SIDE_A + SIDE_B) -> set[str]:
        return {(await self.get(n, "/state/digest"))["digest"] for n in nodes}


@contextlib.asynccontextmanager
async def open_fleet(tmp_path: Any, b_dials_a: bool, **settings: Any) -> AsyncIterator[Fleet]:
    """Side A dials B; side B dials A too unless `b_dials_a` is false (then B is only served)."""
    port_a, port_b = free_port(), free_port()
    a_to_b, b_to_a = TcpProxy(port_b), TcpProxy(port_a)
    for proxy in (a_to_b, b_to_a):
        await proxy.heal()
    common = {"peer_rate_per_s": 200.0, "peer_burst": 200.0, **settings}
    with local_state():
        reset_local_state()
        config_a = make_config(
            tmp_path / "a",
            nodes=list(SIDE_A),
            peers=[{"url": f"http://127.0.0.1:{a_to_b.port}/b1", "node": "a1"}],
            advertise_url=f"http://127.0.0.1:{b_to_a.port}",
            **common,
        )
        side_a = await serve(config_a, port_a)
        async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
            a1 = (await client.get(f"http://127.0.0.1:{port_a}/a1/whoami")).json()["node_id"]
            dials = [{"url": f"http://127.0.0.1:{b_to_a.port}/a1", "node_id": a1, "node": "b1"}] if b_dials_a else []
            config_b = make_config(
                tmp_path / "b",
                nodes=list(SIDE_B),
                genesis_author=a1,
                peers=dials,
                advertise_url=f"http://127.0.0.1:{a_to_b.port}",
                **common,
            )
            side_b = await serve(config_b, port_b)
            ports = {**dict.fromkeys(SIDE_A, port_a), **dict.fromkeys(SIDE_B, port_b)}
            try:
                yield Fleet(client, ports, [a_to_b, b_to_a])
            finally:
                for proxy in (a_to_b, b_to_a):
                    await proxy.cut()
                for side in (side_a, side_b):
                    side.server.should_exit = True
                    await side.task
                    await side.app.state.component.network.stop()
                reset_local_state()


@pytest.fixture
async def fleet(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Fleet]:
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    async with open_fleet(tmp_path, b_dials_a=True) as fleet:
        yield fleet


async def test_a_cluster_dialled_by_the_other_only_gets_the_history_and_new_events_by_push_pull(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
):
    """B dials nobody: A's link pulls from it and pushes back what B's version vector lacks."""
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    async with open_fleet(tmp_path, b_dials_a=False) as fleet:

        async def five_members() -> bool:
            states = [await fleet.get(n, "/state") for n in SIDE_A + SIDE_B]
            return all(len(s["global"]["nodes"]) == 5 for s in states)

        await eventually(five_members, timeout=30, what="B receiving the genesis and history pushed by A")
        assert (await fleet.get("b1", "/peers"))["links"] == []
        await fleet.create_task("b2", "from the served side")
        await eventually(lambda: _has(fleet, "a3", "from the served side"), timeout=15, what="B's event on A")


async def _has(fleet: Fleet, node: str, title: str) -> bool:
    return title in await fleet.titles(node)


async def test_two_clusters_form_one_network_survive_a_partition_and_converge(fleet: Fleet):
    async def five_members() -> bool:
        states = [await fleet.get(n, "/state") for n in SIDE_A + SIDE_B]
        return all(len(s["global"]["nodes"]) == 5 for s in states)

    await eventually(five_members, timeout=30, what="the 2-node cluster joining the 3-node cluster's network")
    links = (await fleet.get("b1", "/peers"))["links"]
    assert links[0]["joined"] and links[0]["genesis_author"] == (await fleet.get("a1", "/whoami"))["node_id"]

    await fleet.create_task("a2", "from cluster A")

    async def reached_b() -> bool:
        return "from cluster A" in await fleet.titles("b2")

    await eventually(reached_b, timeout=15, what="an event of cluster A on cluster B's second node")

    for proxy in fleet.proxies:
        await proxy.cut()
    await fleet.create_task("a3", "A during the partition")
    await fleet.create_task("b2", "B during the partition")

    async def each_side_agrees() -> bool:
        return len(await fleet.digests(SIDE_A)) == 1 and len(await fleet.digests(SIDE_B)) == 1

    await eventually(each_side_agrees, timeout=15, what="each side converging on its own")
    assert "B during the partition" not in await fleet.titles("a1")
    assert "A during the partition" not in await fleet.titles("b1")
    assert len(await fleet.digests()) == 2

    for proxy in fleet.proxies:
        await proxy.heal()

    async def converged() -> bool:
        return len(await fleet.digests()) == 1

    await eventually(converged, timeout=30, what="one state digest on all five nodes after the heal")
    for node in SIDE_A + SIDE_B:
        assert {"A during the partition", "B during the partition"} <= await fleet.titles(node)


async def test_checkpoints_are_certified_across_the_link_and_installed_on_all_five_nodes(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
):
    """The validators are all on side A; their checkpoint signatures reach side B over the link."""
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    async with open_fleet(tmp_path, b_dials_a=True, checkpoint_interval_s=1, checkpoint_settle_s=0.5) as fleet:
        await eventually(fleet.five_members, timeout=30, what="the two clusters forming one network")
        await fleet.create_task("a1", "before the checkpoint")

        async def installed_everywhere() -> bool:
            stats = [await fleet.get(n, "/network/stats") for n in SIDE_A + SIDE_B]
            horizons = {s["checkpoint_horizon"] for s in stats}
            return all(s["checkpoints_installed"] >= 1 for s in stats) and len(horizons) == 1

        await eventually(installed_everywhere, timeout=30, what="one certified checkpoint on all five nodes")
        await fleet.create_task("b2", "after the checkpoint")

        async def agreed() -> bool:
            return len(await fleet.digests()) == 1 and "after the checkpoint" in await fleet.titles("a3")

        await eventually(agreed, timeout=15, what="agreement after the checkpoint")
