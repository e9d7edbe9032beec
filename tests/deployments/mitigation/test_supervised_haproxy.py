"""A node's HAProxy is supervised (issue 21): killed with SIGKILL, master and workers, under traffic,
it is back on the same address within seconds with every ban and rule, and the restart is counted in
the node's /metrics and in the node's and the fleet's health. Before, the node answered
503 `node node-1 unavailable` forever."""

from __future__ import annotations

import asyncio
import os
import signal
import socket

import httpx

from actors.mitigation import node as node_module
from tests.deployments.mitigation.test_kept_state import get
from tests.polling import eventually

NODE = "/nodes/node-1/api/v1"


class Traffic:
    """Requests from 127.0.0.4, one connection each, until stopped; counts what failed."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ok = 0
        self.failed = 0
        self._stop = asyncio.Event()
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.4")
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=2.0, limits=limits) as client:
            while not self._stop.is_set():
                try:
                    answered = (await client.get(self.url)).status_code == 200
                except httpx.TransportError:
                    answered = False
                self.ok, self.failed = (self.ok + 1, self.failed) if answered else (self.ok, self.failed + 1)
                await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self._stop.set()
        await self.task


async def test_haproxy_killed_under_traffic_is_restarted_with_its_bans_and_rules(fleet):
    node = fleet.node()
    url = f"http://{node.address}"
    await fleet.client.post(f"{NODE}/blacklist", json={"ip": "127.0.0.2", "duration_seconds": 600})
    await fleet.client.post(f"{NODE}/rules", json={"pattern": "supervised-evil", "action": "block"})
    traffic = Traffic(url + "/")
    await eventually(lambda: traffic.ok >= 5, what="traffic flowing")
    master = node.proc.pid
    os.killpg(master, signal.SIGKILL)  # the master and every worker at once

    def back() -> bool:
        return node.proc.supervised.restarts == 1 and node.proc.running and node.proc.pid != master

    await eventually(back, timeout=15, what="HAProxy restarted by its supervisor")
    served = traffic.ok
    await eventually(lambda: traffic.ok >= served + 20, timeout=10, what="traffic served again")
    await traffic.stop()
    print(f"requests during the kill: {traffic.ok} answered, {traffic.failed} failed")
    assert await get(url + "/", "127.0.0.2") == 0  # the ban still refuses
    assert await get(url + "/?q=supervised-evil", "127.0.0.5") == 403  # the rule still blocks

    status = await fleet.client.get(f"{NODE}/status")  # not 503 "node node-1 unavailable"
    assert status.status_code == 200 and status.json()["health"] == "healthy"
    child = (await fleet.client.get("/nodes/node-1/health")).json()["children"][0]
    assert child["name"] == "haproxy-node-1" and child["restarts"] == 1 and child["state"] == "running"
    assert child["last_exit"] == -signal.SIGKILL and child["last_exit_reason"] == "killed by SIGKILL"
    metrics = (await fleet.client.get("/nodes/node-1/metrics")).text
    assert 'rayfleet_child_restarts{child="haproxy-node-1"} 1.0' in metrics
    assert 'rayfleet_child_up{child="haproxy-node-1"} 1.0' in metrics

    async def fleet_counts_it() -> bool:
        children = (await fleet.client.get("/health")).json()["children"]
        return [c["restarts"] for c in children] == [1]

    await eventually(fleet_counts_it, timeout=5, what="the fleet's health listing the restart")


async def test_a_restart_reapplies_what_changed_after_the_map_files_were_read(fleet):
    node = fleet.node()
    node.blacklist["127.0.0.8"] = {"ip": "127.0.0.8", "reason": "", "source": "api", "expires": 2_000_000_000}
    await node._reapply()  # what on_restart runs: each map replaced through the runtime API
    shown = await node.proc.command(f"show map {node.paths.blacklist}")
    assert "127.0.0.8 2000000000" in shown
    assert await get(f"http://{node.address}/", "127.0.0.8") == 0


async def test_a_rule_deleted_while_haproxy_is_down_stays_deleted_after_the_restart(fleet):
    node = fleet.node()
    url = f"http://{node.address}"
    created = await fleet.client.post(f"{NODE}/rules", json={"pattern": "gone-soon", "action": "block"})
    assert await get(url + "/?q=gone-soon", "127.0.0.5") == 403
    os.killpg(node.proc.pid, signal.SIGKILL)
    deleted = await fleet.client.delete(f"{NODE}/rules/{created.json()['id']}")
    assert deleted.status_code == 200
    await eventually(lambda: node.proc.supervised.restarts == 1 and node.proc.running, timeout=15)
    assert await get(url + "/?q=gone-soon", "127.0.0.5") == 200
    assert (await fleet.client.get(f"{NODE}/rules")).json()["total"] == 0


async def test_an_automatic_port_taken_before_haproxy_binds_it_is_replaced_by_another(
    make_fleet, monkeypatch, data_plane
):
    """A node's automatic port is free when picked and bound by HAProxy a moment later; another process (or
    an outgoing connection given it as its local port) can take it in between. Seen in a full test run: the
    node's start failed with `cannot bind socket (Address already in use)` and the node was dead. Now it
    picks another port; a configured `listen_port` is never changed."""
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    real, handed = node_module.free_port, []

    def racing(host: str = "127.0.0.1", wanted: int = 0, also: list[str] | None = None) -> int:
        handed.append(taken if not handed else real(host, wanted, also))  # the first pick is lost to the race
        return handed[-1]

    monkeypatch.setattr(node_module, "free_port", racing)
    try:
        fleet = await make_fleet()
        node = fleet.node()
        assert handed[0] == taken and node.port == handed[-1] != taken
        assert fleet.fleet.nodes["node-1"].status == "healthy"
        assert (await data_plane.get(fleet.node_url() + "/")).status_code == 200
        assert node.state.policy.get("port") == node.port  # kept for its next start
        fixed = await make_fleet(listen_port=taken)  # configured: refused, not moved
        assert fixed.fleet.nodes["node-1"].status == "dead"
    finally:
        squatter.close()
