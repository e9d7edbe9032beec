"""A zone that is a Proxmox cluster: three pve-sim nodes over real SSH, one API zone.

A command on a container runs on the node holding it (read from `/cluster/resources`, cached,
read again on a miss); listings cover every node; a migrated container is reached on its new node.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncssh
import httpx
import pytest

from rayfleet.state import local_state
from tests.deployments.lxc.simenv import TEMPLATE, SimEnv, create_ct, make_client
from tests.polling import eventually
from tests.sims.pve.simenv import own_sim

NODES = ["pve1", "pve2", "pve3"]
RESOURCES = "pvesh get /cluster/resources --type vm --output-format json"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SimEnv]:
    yield from own_sim(SimEnv, tmp_path, NODES)


def cluster_zone(env: SimEnv) -> dict[str, Any]:
    """The zone as a cluster: enter at pve1, every node by name with its own port."""
    return {**env.zone("pve1"), "nodes": {name: {"port": port} for name, port in env.ports.items()}}


@pytest.fixture
async def api(cluster: SimEnv, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    with local_state():
        client, app = make_client(
            cluster.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": cluster_zone(cluster)}}})
        )
        async with client:
            yield client
        await app.state.component.service.pool.close()


async def _ssh(env: SimEnv, node: str, line: str) -> asyncssh.SSHCompletedProcess:
    async with await env.connect(node) as conn:
        return await conn.run(line)


async def test_a_container_is_reached_on_its_node_after_migrate(api, cluster):
    vmid = await create_ct(api)
    assert vmid in cluster.node_model("pve1").containers
    moved = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "pve3", "restart": True})
    assert moved.status_code == 200, moved.text
    assert vmid in cluster.node_model("pve3").containers
    stopped = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [vmid]})
    assert stopped.status_code == 200 and stopped.json()["results"][vmid]["outcome"] == "stopped", stopped.text

    shown = await api.get(f"/api/v1/lxc/instances/{vmid}")
    assert shown.status_code == 200, shown.text
    assert shown.json()["hostname"] == cluster.node_model("pve3").containers[vmid]["config"]["hostname"]
    started = await api.post("/api/v1/lxc/instances/start", json={"instance_ids": [vmid]})
    assert started.status_code == 200 and started.json()["results"][vmid]["outcome"] == "started", started.text
    assert cluster.node_model("pve3").containers[vmid]["status"] == "running"
    assert any(line.startswith(f"timeout -k 5 3600 pct start {vmid}") for line in cluster.commands("pve3"))
    assert sum(f"pct start {vmid}" in line for line in cluster.commands("pve1")) == 1  # at its creation only
    snap = await api.post(f"/api/v1/lxc/instances/{vmid}/snapshots", json={"snapshot_name": "after"})
    assert snap.status_code == 200, snap.text
    assert "after" in cluster.node_model("pve3").containers[vmid]["snapshots"]


async def test_listing_covers_every_node_and_names_each_containers_node(api, cluster):
    first = await create_ct(api)
    second = await create_ct(api)
    await api.post(f"/api/v1/lxc/instances/{second}/migrate", json={"target_host": "pve2", "restart": True})
    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200, listing.text
    rows = {str(r["vmid"]): r for r in listing.json()}
    assert set(rows) == {first, second}
    assert rows[first]["node"] == "pve1" and rows[second]["node"] == "pve2"
    assert rows[second]["id"] == f"lxc/{second}"


async def test_placement_is_cached_and_read_again_when_a_node_says_the_container_is_gone(api, cluster):
    vmid = await create_ct(api)
    await api.get(f"/api/v1/lxc/instances/{vmid}")
    await api.get(f"/api/v1/lxc/instances/{vmid}")
    reads = [line for line in cluster.commands() if RESOURCES in line]
    assert len(reads) == 1  # read on the first miss, then cached

    # someone else migrates it behind the API's back: pve1 now answers "does not exist"
    assert (await _ssh(cluster, "pve1", f"pct migrate {vmid} pve2 --restart")).exit_status == 0
    shown = await api.get(f"/api/v1/lxc/instances/{vmid}")
    assert shown.status_code == 200, shown.text
    assert len([line for line in cluster.commands() if RESOURCES in line]) == 2
    status = await api.post("/api/v1/lxc/instances/status", json={"instance_ids": [vmid]})
    assert status.status_code == 200 and status.json()[vmid]["state"] == "running", status.text

    # vzdump on a node that does not hold the guest skips it and exits 0: the API must not take
    # that for a backup. Jobs run in the runner actor, whose map is its own: a first job caches pve2.
    async def backup() -> dict:
        accepted = await api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers={"Prefer": "respond-async"})

        async def finished():
            job = (await api.get(accepted.headers["location"])).json()
            return job if job["state"] != "running" else None

        return await eventually(finished, timeout=30, what="the backup job")

    vzdump = f"$ vzdump {vmid} --mode snapshot --compress zstd --dumpdir /var/lib/vz/dump"
    first = await backup()
    assert first["state"] == "succeeded" and [x for x in first["progress"] if x.startswith("$ ")] == [vzdump]
    assert (await _ssh(cluster, "pve2", f"pct migrate {vmid} pve3 --restart")).exit_status == 0
    job = await backup()
    assert job["state"] == "succeeded", job
    assert job["result"]["archive"] and cluster.node_model("pve3").host_path(job["result"]["archive"]).is_file()
    # the job's output holds its own commands (vzdump skipped on pve2, then run on pve3), not the map's reads
    assert [line for line in job["progress"] if line.startswith("$ ")] == [vzdump] * 2
    assert "INFO: skip external VMs: " + vmid in job["progress"]


async def test_an_unknown_container_is_404_after_one_cluster_read(api, cluster):
    missing = await api.get("/api/v1/lxc/instances/4242")
    assert missing.status_code == 404
    assert "4242.conf' does not exist" in missing.json()["message"]
    bulk = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": ["4242"]})
    assert bulk.status_code == 404
    assert "cluster nodes pve1, pve2, pve3" in bulk.json()["message"]


async def test_bulk_actions_reach_containers_on_different_nodes(api, cluster):
    ids = [await create_ct(api) for _ in range(3)]
    for vmid, node in zip(ids[1:], ["pve2", "pve3"], strict=True):
        moved = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": node, "restart": True})
        assert moved.status_code == 200, moved.text
    stopped = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": ids})
    assert stopped.status_code == 200, stopped.text
    assert {r["outcome"] for r in stopped.json()["results"].values()} == {"stopped"}
    for vmid, node in zip(ids, NODES, strict=True):
        assert cluster.node_model(node).containers[vmid]["status"] == "stopped"


async def test_a_running_container_migrates_in_restart_mode_only(api, cluster):
    vmid = await create_ct(api)  # created and started
    refused = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "pve2"})
    assert refused.status_code == 409, refused.text
    moved = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "pve2", "restart": True})
    assert moved.status_code == 200, moved.text
    assert cluster.node_model("pve2").containers[vmid]["status"] == "running"


def test_a_node_name_must_be_a_node_name(cluster, tmp_path):
    zone = cluster_zone(cluster)
    zone["nodes"] = {"pve1; reboot": {"port": 22}}
    with pytest.raises(ValueError, match="nodes"):
        cluster.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})


async def test_jobs_on_containers_of_three_nodes_run_at_once_each_on_its_node(api, cluster):
    ids = [await create_ct(api) for _ in range(3)]
    for vmid, node in zip(ids[1:], ["pve2", "pve3"], strict=True):
        moved = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": node, "restart": True})
        assert moved.status_code == 200, moved.text
    accepted = [
        await api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers={"Prefer": "respond-async"})
        for vmid in ids
    ]
    assert [a.status_code for a in accepted] == [202, 202, 202]

    async def all_done():
        jobs = [(await api.get(a.headers["location"])).json() for a in accepted]
        return jobs if all(j["state"] != "running" for j in jobs) else None

    jobs = await eventually(all_done, timeout=60, what="three backup jobs")
    assert [j["state"] for j in jobs] == ["succeeded"] * 3
    for vmid, node in zip(ids, NODES, strict=True):
        assert any(f"vzdump {vmid} " in line for line in cluster.commands(node))
        archives = cluster.node_model(node).host_path("/var/lib/vz/dump")
        assert [p for p in archives.iterdir() if p.name.startswith(f"vzdump-lxc-{vmid}-")]


async def test_the_zones_hosts_are_the_clusters_nodes(api, cluster):
    hosts = await api.get("/api/v1/px/hosts")
    assert hosts.status_code == 200, hosts.text
    rows = hosts.json()
    assert [(r["node"], r["port"], r["reachable"], r["error"]) for r in rows] == [
        (name, port, True, None) for name, port in cluster.ports.items()
    ]
    update = await api.post("/api/v1/px/update", json={})
    assert update.status_code == 200, update.text
    for node in NODES:
        assert f"[eu-south-1/az1@{node}]" in update.json()["output"]
        assert any(line.endswith("apt-get update") for line in cluster.commands(node))
        assert cluster.node_model(node).data["apt"]["lists_fresh"] is True


async def test_a_node_configured_under_the_wrong_name_is_reported(cluster, tmp_path):
    zone = cluster_zone(cluster)
    zone["nodes"] = {"pve1": {"port": cluster.ports["pve1"]}, "pve9": {"port": cluster.ports["pve2"]}}
    with local_state():
        client, app = make_client(
            cluster.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})
        )
        async with client:
            rows = (await client.get("/api/v1/px/hosts")).json()
            assert rows[1]["error"] == "configured as node 'pve9' but the host is 'pve2'"
            vmid = await create_ct(client)
            moved = await client.post(
                f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "pve2", "restart": True}
            )
            assert moved.status_code == 200
            lost = await client.get(f"/api/v1/lxc/instances/{vmid}")
            assert lost.status_code == 500
            assert "node 'pve2' of the cluster is not among eu-south-1/az1's configured nodes" in lost.text
        await app.state.component.service.pool.close()


async def test_with_the_entry_node_down_the_map_and_cluster_wide_commands_go_to_a_live_node(api, cluster):
    on_entry = await create_ct(api)
    elsewhere = await create_ct(api)
    moved = await api.post(f"/api/v1/lxc/instances/{elsewhere}/migrate", json={"target_host": "pve2", "restart": True})
    assert moved.status_code == 200, moved.text
    cluster.power_off("pve1")  # the zone's entry node

    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200, listing.text
    rows = {str(r["vmid"]): (r["node"], r["status"]) for r in listing.json()}
    assert rows == {on_entry: ("pve1", "unknown"), elsewhere: ("pve2", "running")}
    assert listing.headers["x-offline-nodes"] == "pve1"
    assert any("pvesh get /cluster/resources" in line for line in cluster.commands("pve2"))

    # moved behind the API's back: the map is read again, from a live node
    assert (await _ssh(cluster, "pve2", f"pct migrate {elsewhere} pve3 --restart")).exit_status == 0
    reads_before = len([line for line in cluster.commands() if RESOURCES in line])
    shown = await api.get(f"/api/v1/lxc/instances/{elsewhere}")
    assert shown.status_code == 200, shown.text
    assert len([line for line in cluster.commands() if RESOURCES in line]) == reads_before + 1

    created = await create_ct(api)  # nextid and pct create on the first live node
    assert created in cluster.node_model("pve2").containers
    assert cluster.node_model("pve2").containers[created]["status"] == "running"

    # a job (its runner has its own map and its own view of the hosts): the host that did not
    # answer is in its output, then the same command on the next host
    accepted = await api.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE}, headers={"Prefer": "respond-async"})
    assert accepted.status_code == 202, accepted.text

    async def finished():
        job = (await api.get(accepted.headers["location"])).json()
        return job if job["state"] != "running" else None

    job = await eventually(finished, timeout=30, what="the create job")
    assert job["state"] == "succeeded", job
    nextid = "$ pvesh get /cluster/nextid"
    refused = f"ssh: connect to host 127.0.0.1 port {cluster.ports['pve1']}: Connection refused"
    assert job["progress"][:3] == [nextid, refused, nextid], job["progress"]


async def test_a_container_on_a_down_node_answers_503_naming_the_node(api, cluster):
    alive = await create_ct(api)
    lost = await create_ct(api)
    moved = await api.post(f"/api/v1/lxc/instances/{lost}/migrate", json={"target_host": "pve3", "restart": True})
    assert moved.status_code == 200, moved.text
    cluster.power_off("pve3")

    shown = await api.get(f"/api/v1/lxc/instances/{lost}")
    assert shown.status_code == 503, shown.text
    body = shown.json()
    assert (body["code"], body["name"]) == (503, "Service Unavailable")
    assert f"container {lost} is on node 'pve3' of eu-south-1/az1, which did not answer" in body["description"]
    assert "Connection refused" in body["description"]
    snap = await api.post(f"/api/v1/lxc/instances/{lost}/snapshots", json={"snapshot_name": "s1"})
    assert snap.status_code == 503, snap.text

    both = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [alive, lost]})
    assert both.status_code == 200, both.text
    results = both.json()["results"]
    assert results[alive]["outcome"] == "stopped"
    assert results[lost]["outcome"] == "failed" and "node 'pve3'" in results[lost]["error"]
    only = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [lost]})
    assert only.status_code == 503 and "node 'pve3'" in only.json()["description"], only.text

    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200, listing.text
    assert {str(r["vmid"]): r["status"] for r in listing.json()} == {alive: "stopped", lost: "unknown"}
    assert listing.headers["x-offline-nodes"] == "pve3"
    hosts = {r["node"] or r["error"]: r["reachable"] for r in (await api.get("/api/v1/px/hosts")).json()}
    assert hosts["pve1"] and hosts["pve2"] and list(hosts.values()).count(False) == 1

    accepted = await api.post(f"/api/v1/lxc/instances/{lost}/backup", json={}, headers={"Prefer": "respond-async"})

    async def finished():
        job = (await api.get(accepted.headers["location"])).json()
        return job if job["state"] != "running" else None

    job = await eventually(finished, timeout=30, what="the backup job")
    assert job["state"] == "failed" and job["error"]["status"] == 503, job


async def test_an_entry_that_never_answers_times_out_once_and_is_then_tried_last(cluster, tmp_path):
    taken: list[asyncio.StreamWriter] = []

    async def hung(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        taken.append(writer)  # a hung host: the TCP connection is taken, no SSH banner ever comes

    silent = await asyncio.start_server(hung, "127.0.0.1", 0)
    zone = {**cluster_zone(cluster), "port": silent.sockets[0].getsockname()[1], "connect_timeout": 1}
    with local_state():
        client, app = make_client(
            cluster.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})
        )
        async with client:
            listing = await client.get("/api/v1/lxc/instances")
            assert listing.status_code == 200 and listing.json() == [], listing.text
            vmid = await create_ct(client)  # nextid, create, start: on the first node that answers
            assert cluster.node_model("pve1").containers[vmid]["status"] == "running"
            assert (await client.get(f"/api/v1/lxc/instances/{vmid}")).status_code == 200
            assert len(taken) == 1  # the entry was waited for once, then tried last

            for node in NODES:
                cluster.power_off(node)
            none = await client.get("/api/v1/lxc/instances")
            assert none.status_code == 503, none.text
            assert none.json()["description"].startswith("no node of the cluster eu-south-1/az1 answered (tried ")
            assert "Connection timed out" in none.json()["description"]  # the entry, tried last
        await app.state.component.service.pool.close()
    for writer in taken:
        writer.close()
    silent.close()


async def test_a_node_whose_ssh_is_dead_fails_only_its_own_containers_and_is_reached_when_back(api, cluster):
    alive = await create_ct(api)
    lost = await create_ct(api)
    moved = await api.post(f"/api/v1/lxc/instances/{lost}/migrate", json={"target_host": "pve3", "restart": True})
    assert moved.status_code == 200, moved.text
    cluster.power_off("pve3", ssh_only=True)  # the cluster still sees pve3 online

    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200 and "x-offline-nodes" not in listing.headers, listing.text
    found = {r["instance_id"]: r for r in (await api.get("/api/v1/sec/discovery")).json()}
    assert found[alive]["error"] is None and found[alive]["listening"] is not None
    assert found[lost]["listening"] is None and "node 'pve3'" in found[lost]["error"]
    status = await api.post("/api/v1/lxc/instances/status", json={"instance_ids": [alive, lost]})
    assert status.status_code == 200, status.text
    assert status.json()[alive]["state"] == "running" and "node 'pve3'" in status.json()[lost]["error"]

    cluster.power_on("pve3")
    shown = await api.get(f"/api/v1/lxc/instances/{lost}")
    assert shown.status_code == 200, shown.text
    stopped = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [lost]})
    assert stopped.status_code == 200 and cluster.node_model("pve3").containers[lost]["status"] == "stopped"


async def test_with_the_entry_down_host_commands_are_not_sent_to_another_node(api, cluster):
    await create_ct(api)
    cluster.power_off("pve1")
    before = {node: len(cluster.commands(node)) for node in ("pve2", "pve3")}
    for method, path, body in [
        ("POST", "/api/v1/px/reboot", {"confirm": True}),
        ("GET", "/api/v1/px/status", None),
        ("GET", "/api/v1/px/templates", None),
        ("GET", "/api/v1/px/clusters", None),
    ]:
        response = await api.request(method, path, json=body)
        assert response.status_code == 503, (path, response.text)
        assert response.json()["description"].startswith("the entry host of eu-south-1/az1 (127.0.0.1:"), path
    # the entry's own commands (reboot, its status, its node-local templates) never ran elsewhere
    assert {node: len(cluster.commands(node)) for node in ("pve2", "pve3")} == before

    assert (await api.get("/api/v1/lxc/instances")).status_code == 200  # from pve2: pve1 is tried last
    cluster.power_on("pve1")
    assert (await api.get("/api/v1/px/status")).status_code == 200  # the entry answers its own command
    reads = len([line for line in cluster.commands("pve1") if "/cluster/resources" in line])
    assert (await api.get("/api/v1/lxc/instances")).status_code == 200
    assert len([line for line in cluster.commands("pve1") if "/cluster/resources" in line]) == reads + 1
