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
from pydantic import ValidationError

from actors.tasknet.node_actor import TaskNode
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
    """Five nodes on two servers; `node -> base URL`, the two proxies between the servers, and the
    two deployments' networks (whose node actors are in-process stand-ins)."""

    def __init__(
        self, client: httpx.AsyncClient, ports: dict[str, int], proxies: list[TcpProxy], networks: list[Any]
    ) -> None:
        self.client, self.ports, self.proxies, self.networks = client, ports, proxies, networks

    def handle(self, node: str) -> Any:
        """The node actor's handle (made when its deployment first served it)."""
        (handle,) = [n.handles[node] for n in self.networks if node in n.handles]
        return handle

    def url(self, node: str, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[node]}/{node}{path}"

    async def get(self, node: str, path: str) -> Any:
        response = await self.client.get(self.url(node, path))
        assert response.status_code == 200, response.text
        return response.json()

    async def post(self, node: str, path: str, body: Any = None) -> httpx.Response:
        return await self.client.post(self.url(node, path), headers={"X-Node-Token": TOKENS[node]}, json=body)

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
async def open_fleet(
    tmp_path: Any, b_dials_a: bool, a_settings: dict[str, Any] | None = None, **settings: Any
) -> AsyncIterator[Fleet]:
    """Side A dials B; side B dials A too unless `b_dials_a` is false (then B is only served).
    `a_settings` apply to side A only (e.g. its genesis validators)."""
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
            **{**common, **(a_settings or {})},
        )
        side_a = await serve(config_a, port_a)
        # the five nodes share this process's event loop with the client: patience for a loaded machine
        async with httpx.AsyncClient(timeout=30, trust_env=False) as client:
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
                networks = [side.app.state.component.network for side in (side_a, side_b)]
                yield Fleet(client, ports, [a_to_b, b_to_a], networks)
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


async def _decided(fleet: Fleet, body: dict[str, Any]) -> str:
    """A proposal made on a1, voted yes by all five nodes (each through its own API), closed approved."""
    response = await fleet.post("a1", "/proposals", body)
    assert response.status_code == 200, response.text
    pid = str(response.json()["id"])
    for node in SIDE_A + SIDE_B:

        async def voted(node: str = node) -> bool:
            return (await fleet.post(node, f"/proposals/{pid}/vote", {"vote": "yes"})).status_code == 200

        await eventually(voted, timeout=15, what=f"{node} voting on {pid}")
    closed: list[httpx.Response] = []

    async def close() -> bool:
        closed.append(await fleet.post("a1", f"/proposals/{pid}/close"))
        return closed[-1].status_code == 200

    await eventually(close, timeout=15, what="the end of the voting period")
    assert closed[-1].json()["result"] == "approved", closed[-1].text
    return pid


async def _cut_and_heal(fleet: Fleet, down: float, up: float) -> str:
    """Cut the link between the validators a1 and b1 until the leader steps down (check-quorum, within
    `down` s), heal it, and the leader elected over HTTP (within `up` s)."""
    for proxy in fleet.proxies:
        await proxy.cut()

    async def leaderless() -> bool:
        return await _leader(fleet, ("a1", "b1")) is None

    await eventually(leaderless, timeout=down, what="the leader stepping down without its peer (check-quorum)")
    for proxy in fleet.proxies:
        await proxy.heal()
    leader = await eventually(lambda: _leader(fleet, ("a1", "b1")), timeout=up, what="a leader elected over HTTP")
    return str(leader)


async def _leader(fleet: Fleet, nodes: tuple[str, ...]) -> str | None:
    roles = {n: (await fleet.get(n, "/health"))["raft_role"] for n in nodes}
    leaders = [n for n, role in roles.items() if role == "leader"]
    return leaders[0] if len(leaders) == 1 else None


async def test_a_validator_of_the_other_cluster_takes_part_in_raft_over_the_http_link(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
):
    """a1 is the only genesis validator; b1 (the other cluster, reachable only over the peer link) is
    added by a validator_change: it catches up as a learner over `/peer/raft` (from a snapshot), then every commit and
    every ratification needs it (2 of 2). Cutting the link deposes the leader (check-quorum); after the
    heal a leader is elected over HTTP and a proposal ratified on the follower (forwarded over the link
    to the leader of the other cluster) carries both signatures."""
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    # a Raft snapshot after every applied entry: b1 catches up from one (install_snapshot over HTTP)
    side_a = {"validators": ["a1"], "raft_snapshot_entries": 1}
    async with open_fleet(tmp_path, b_dials_a=True, a_settings=side_a, raft_tick_s=0.05, ratify_timeout_s=30) as fleet:
        await eventually(fleet.five_members, timeout=30, what="the two clusters forming one network")
        ids = {n: (await fleet.get(n, "/whoami")) for n in ("a1", "b1")}
        b2 = await fleet.get("b2", "/whoami")
        changes = [
            {"action": "add", "node_id": me["node_id"], "public_key": me["public_key"]} for me in (ids["b1"], b2)
        ]
        pid, unlinked = await asyncio.gather(
            *(_decided(fleet, {"title": "add", "proposal_type": "validator_change", "params": c}) for c in changes)
        )
        # a1 has no link to b2 (and b2 is no node actor of A): adding it is refused at once, not retried
        response = await fleet.post("a1", f"/governance/ratify/{unlinked}")
        assert response.status_code == 409 and "not reachable from the Raft leader" in response.json()["detail"]
        response = await fleet.post("a1", f"/governance/ratify/{pid}")
        assert response.status_code == 200 and response.json()["executed"] is True, response.text
        want = sorted(i["node_id"] for i in ids.values())

        async def two_validators_everywhere() -> bool:
            sets = [sorted((await fleet.get(n, "/config"))["validator_set"]) for n in SIDE_A + SIDE_B]
            return all(s == want for s in sets)

        await eventually(two_validators_everywhere, timeout=20, what="a1 and b1 the validators on all five nodes")
        health = await fleet.get("b1", "/health")
        assert health["raft_role"] == "follower" and health["raft_snapshot_index"] > 0
        (link,) = (await fleet.get("a1", "/peers"))["links"]
        assert link["raft_sent"] > 0

        tax = {"key": "task_completion_tax", "value": 0.07}
        taxed = await _decided(fleet, {"title": "tax", "proposal_type": "config_change", "params": tax})

        leader = await _cut_and_heal(fleet, down=15, up=20)
        # ratified on the follower: its proposal goes to the leader of the other cluster over the peer link
        follower = "b1" if leader == "a1" else "a1"
        answers: list[httpx.Response] = []

        async def ratified() -> bool:
            answers.append(await fleet.post(follower, f"/governance/ratify/{taxed}"))
            return answers[-1].status_code == 200 or "not pending_ratification" in answers[-1].text

        await eventually(ratified, timeout=40, what="the tax change ratified by both validators")
        links = (await fleet.get(follower, "/peers"))["links"]
        assert sum(link["proposals_forwarded"] for link in links) >= 1, links

        async def taxed_everywhere() -> bool:
            values = [(await fleet.get(n, "/config"))["task_completion_tax"] for n in SIDE_A + SIDE_B]
            return values == [0.07] * 5

        await eventually(taxed_everywhere, timeout=20, what="the ratified change executed on all five nodes")
        last = (await fleet.get("a2", "/state"))["global"]["ratified"][-1]
        assert last["proposal_id"] == taxed and sorted(last["signers"]) == want


async def test_a_leader_is_elected_and_keeps_its_term_over_a_link_slower_than_the_default_election_timeout(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
):
    """a1 and b1 (one validator per cluster, 2 of 2) with `raft_election_timeout_s: 4`. The proxies
    between the clusters hold every chunk 0.6 s: a round trip of 1.2 s or more, over the default
    timeout (10 to 20 ticks of 0.05 s, at most 1 s: each pre-vote or vote would time out before its
    answer and elections would repeat), under the configured one. After a cut and the heal, a leader is
    elected over the slow link, and it stays leader, in the same term, across many heartbeats."""
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    settings = {"raft_tick_s": 0.05, "raft_election_timeout_s": 4.0, "ratify_timeout_s": 30}
    async with open_fleet(tmp_path, b_dials_a=True, a_settings={"validators": ["a1"]}, **settings) as fleet:
        await eventually(fleet.five_members, timeout=30, what="the two clusters forming one network")
        b1 = await fleet.get("b1", "/whoami")
        change = {"action": "add", "node_id": b1["node_id"], "public_key": b1["public_key"]}
        pid = await _decided(fleet, {"title": "add b1", "proposal_type": "validator_change", "params": change})
        response = await fleet.post("a1", f"/governance/ratify/{pid}")
        assert response.status_code == 200 and response.json()["executed"] is True, response.text

        async def b1_follows() -> bool:
            return (await fleet.get("b1", "/health"))["raft_role"] == "follower"

        await eventually(b1_follows, timeout=20, what="b1 following over the link")
        for proxy in fleet.proxies:
            proxy.delay_s = 0.6
        leader = await _cut_and_heal(fleet, down=30, up=60)
        term = (await fleet.get(str(leader), "/health"))["raft_term"]
        (link,) = (await fleet.get(str(leader), "/peers"))["links"]
        start = link["raft_sent"]

        async def answered_over_the_slow_link() -> bool:
            (now,) = (await fleet.get(str(leader), "/peers"))["links"]
            return bool(now["raft_sent"] >= start + 60)

        await eventually(answered_over_the_slow_link, timeout=60, what="60 Raft answers over the slow link")
        for node in ("a1", "b1"):
            health = await fleet.get(node, "/health")
            assert health["raft_term"] == term, (node, health)
            assert health["raft_role"] == ("leader" if node == leader else "follower"), (node, health)


@pytest.mark.parametrize("value", [0, -1, 0.19, 601])  # 0.19 s is under 4 ticks of 0.05 s
def test_an_election_timeout_out_of_range_is_refused(tmp_path: Any, value: float):
    with pytest.raises(ValidationError, match="raft_election_timeout_s"):
        make_config(tmp_path, raft_tick_s=0.05, raft_election_timeout_s=value)


async def test_the_election_timeout_is_given_to_the_nodes_raft_in_ticks(tmp_path: Any):
    """2 s at 0.05 s a tick is 40 ticks (the test above shows the Raft using it); unset, Raft's 10."""
    for name, extra, ticks in (("n1", {"raft_election_timeout_s": 2.0}, 40), ("n2", {}, 10)):
        config = make_config(tmp_path, nodes=[name], raft_tick_s=0.05, **extra)
        node = TaskNode(name, None, config.actor_settings())  # no data folder: no files to leave open
        try:
            assert node.core.raft_election_ticks == ticks
        finally:
            await node.stop()
