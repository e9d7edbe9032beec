"""Tier 3, own clusters: two `rayfleet up` instances (two Ray clusters, tasknet only, 3 + 2 nodes)
form one task network over the HTTP peer routes, through loopback TCP proxies the test cuts (a
partition while both sides write) and heals; all five nodes end with the same state digest."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from typing import Any

import httpx
import pytest

from rayfleet.launcher import Launched, free_port, launch
from tests.conftest import ROOT
from tests.deployments.tasknet.tcpproxy import TcpProxy
from tests.polling import eventually_sync

SIDE_A, SIDE_B = ("n1", "n2", "n3"), ("n1", "n2")


class Proxies:
    """The two proxies (A dials B, B dials A), served by an event loop in a thread of their own."""

    def __init__(self, port_a: int, port_b: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.a_to_b, self.b_to_a = TcpProxy(port_b), TcpProxy(port_a)

    def _run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=10)

    def heal(self) -> None:
        for proxy in (self.a_to_b, self.b_to_a):
            self._run(proxy.heal())

    def cut(self) -> None:
        for proxy in (self.a_to_b, self.b_to_a):
            self._run(proxy.cut())

    def close(self) -> None:
        self.cut()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def _env(state: Any, port: int, nodes: tuple[str, ...], **extra: str) -> dict[str, str]:
    return {
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(ROOT),
        "RAYFLEET_PORT": str(port),
        "TASKNET__DATA_DIR": str(state / "tasknet"),
        "TASKNET__NODES": json.dumps(list(nodes)),
        "TASKNET__ANTI_ENTROPY_INTERVAL_S": "0.2",
        "TASKNET__WEBRTC__ENABLED": "false",
        **extra,
    }


@pytest.fixture(scope="module")
def two_clusters(tmp_path_factory) -> Iterator[tuple[Launched, Launched, Proxies]]:
    port_a, port_b = free_port(), free_port()
    proxies = Proxies(port_a, port_b)
    proxies.heal()
    state_a, state_b = tmp_path_factory.mktemp("tasknet-a"), tmp_path_factory.mktemp("tasknet-b")
    peer_of_a = [{"url": f"http://127.0.0.1:{proxies.a_to_b.port}/tasknet/n1"}]
    env_a = _env(state_a, port_a, SIDE_A, TASKNET__PEERS=json.dumps(peer_of_a))
    launched_a = launch(state_a, ["tasknet"], env=env_a, cwd=ROOT, timeout=300)
    try:
        a1 = httpx.get(f"{launched_a.base_url}/tasknet/n1/whoami", timeout=60, trust_env=False).json()["node_id"]
        peer_of_b = [{"url": f"http://127.0.0.1:{proxies.b_to_a.port}/tasknet/n1", "node_id": a1}]
        env_b = _env(state_b, port_b, SIDE_B, TASKNET__GENESIS_AUTHOR=a1, TASKNET__PEERS=json.dumps(peer_of_b))
        launched_b = launch(state_b, ["tasknet"], env=env_b, cwd=ROOT, timeout=300)
        try:
            yield launched_a, launched_b, proxies
        finally:
            launched_b.stop()
    finally:
        launched_a.stop()
        proxies.close()


class Side:
    def __init__(self, launched: Launched, nodes: tuple[str, ...]) -> None:
        self.base, self.nodes = launched.base_url, nodes
        pairs = dict(item.split(":", 1) for item in launched.secrets["TASKNET_NODE_TOKENS"].split(","))
        self.tokens = {n: pairs[n] for n in nodes}
        self.http = httpx.Client(timeout=30, trust_env=False)

    def get(self, node: str, path: str) -> Any:
        response = self.http.get(f"{self.base}/tasknet/{node}{path}")
        assert response.status_code == 200, response.text
        return response.json()

    def create_task(self, node: str, title: str) -> None:
        response = self.http.post(
            f"{self.base}/tasknet/{node}/tasks",
            headers={"X-Node-Token": self.tokens[node]},
            json={"title": title, "reward": 1},
        )
        assert response.status_code == 200, response.text

    def titles(self, node: str) -> set[str]:
        return {t["title"] for t in self.get(node, "/state")["general"]["tasks"].values()}

    def digests(self) -> set[str]:
        return {self.get(n, "/state/digest")["digest"] for n in self.nodes}


def wait(check: Any, what: str, timeout: float = 60.0) -> Any:
    return eventually_sync(check, timeout=timeout, interval=0.2, what=what)


def test_two_rayfleet_clusters_form_one_network_partition_heal_and_converge(two_clusters) -> None:
    launched_a, launched_b, proxies = two_clusters
    a, b = Side(launched_a, SIDE_A), Side(launched_b, SIDE_B)
    wait(
        lambda: all(len(s.get(n, "/state")["global"]["nodes"]) == 5 for s in (a, b) for n in s.nodes),
        "the 2-node cluster joining the 3-node cluster's network",
        timeout=90,
    )
    a.create_task("n2", "from cluster A")
    wait(lambda: "from cluster A" in b.titles("n2"), "cluster A's event on cluster B")

    proxies.cut()
    a.create_task("n3", "A during the partition")
    b.create_task("n2", "B during the partition")
    wait(lambda: len(a.digests()) == 1 and len(b.digests()) == 1, "each side converging on its own")
    assert "B during the partition" not in a.titles("n1") and "A during the partition" not in b.titles("n1")
    assert a.digests() != b.digests()

    proxies.heal()
    wait(lambda: a.digests() == b.digests() and len(a.digests()) == 1, "one state digest on all five nodes")
    for side in (a, b):
        for node in side.nodes:
            assert {"A during the partition", "B during the partition"} <= side.titles(node)
