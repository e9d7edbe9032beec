"""A zone that is a Proxmox cluster: three pve-sim nodes over real SSH, one API zone.

A command on a container runs on the node holding it (read from `/cluster/resources`, cached,
read again on a miss); listings cover every node; a migrated container is reached on its new node.
"""

from __future__ import annotations

import asyncio
import csv
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncssh
import httpx
import pytest

from rayfleet.state import local_state
from tests.conftest import DATA
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


async def _one_on_pve1_one_on_pve3_down(
    api: httpx.AsyncClient, cluster: SimEnv, ssh_only: bool = False
) -> tuple[str, str]:
    """Two containers, one on pve1 and one moved to pve3; then pve3 powered off (or only its sshd)."""
    alive = await create_ct(api)
    lost = await create_ct(api)
    moved = await api.post(f"/api/v1/lxc/instances/{lost}/migrate", json={"target_host": "pve3", "restart": True})
    assert moved.status_code == 200, moved.text
    cluster.power_off("pve3", ssh_only=ssh_only)
    return alive, lost


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
    alive, lost = await _one_on_pve1_one_on_pve3_down(api, cluster)

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


async def test_scale_with_a_node_down_scales_the_others_and_reports_each_container(api, cluster):
    alive, lost = await _one_on_pve1_one_on_pve3_down(api, cluster)

    scaled = await api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [alive, lost], "memory": 1024})
    assert scaled.status_code == 200, scaled.text
    results = scaled.json()["results"]
    assert results[alive] == {"outcome": "scaled", "status": None, "error": None}
    assert results[lost]["outcome"] == "failed" and results[lost]["status"] is None
    assert f"container {lost} is on node 'pve3' of eu-south-1/az1, which did not answer" in results[lost]["error"]
    assert cluster.node_model("pve1").containers[alive]["config"]["memory"] == 1024
    assert f"Instance {alive} scaled." in scaled.json()["output"]
    assert f"Instance {lost} failed: container {lost} is on node 'pve3'" in scaled.json()["output"]

    # a bad value among the containers that answer is still a 400 for the batch, nothing done
    shrink = await api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [alive, lost], "storage_size": "1G"})
    assert shrink.status_code == 400 and "cannot shrink" in shrink.json()["error"], shrink.text
    # every container failed: the error (503, naming the node)
    _problem(await api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [lost], "memory": 2048}), "pve3")

    cluster.power_on("pve3")
    back = await api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [alive, lost], "cpucores": 2})
    assert back.status_code == 200, back.text
    assert {r["outcome"] for r in back.json()["results"].values()} == {"scaled"}
    assert cluster.node_model("pve3").containers[lost]["config"]["cores"] == 2


async def test_a_migration_to_a_node_that_is_down_fails_and_the_container_stays_reachable(api, cluster):
    vmid = await create_ct(api)
    cluster.power_off("pve3")
    refused = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "pve3", "restart": True})
    assert refused.status_code == 500, refused.text
    assert refused.json()["details"] == "migration aborted\n"
    assert "Can't connect to destination address using public key" in refused.json()["output"]
    assert cluster.node_model("pve1").containers[vmid]["status"] == "running"
    shown = await api.get(f"/api/v1/lxc/instances/{vmid}")  # the map still says pve1: no 503 for pve3
    assert shown.status_code == 200, shown.text
    stopped = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [vmid]})
    assert stopped.status_code == 200 and stopped.json()["results"][vmid]["outcome"] == "stopped", stopped.text


async def test_a_cluster_without_quorum_answers_503_for_what_needs_it_and_still_lists_and_stops(api, cluster):
    running = await create_ct(api)
    stopped = await create_ct(api)
    assert (await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [stopped]})).status_code == 200
    cluster.power_off("pve2")
    cluster.power_off("pve3")  # pve1 alone: no majority of the three votes

    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200 and listing.headers["x-offline-nodes"] == "pve2, pve3", listing.text
    _problem(await api.post("/api/v1/lxc/instances/start", json={"instance_ids": [stopped]}), "no quorum")
    both = await api.post("/api/v1/lxc/instances/start", json={"instance_ids": [running, stopped]})
    assert both.status_code == 200, both.text
    assert both.json()["results"][running]["outcome"] == "already running"
    assert "cluster not ready - no quorum?" in both.json()["results"][stopped]["error"]
    moved = await api.post(f"/api/v1/lxc/instances/{running}/migrate", json={"target_host": "pve2", "restart": True})
    _problem(moved, "cluster not ready - no quorum?")
    halted = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [running]})
    assert halted.status_code == 200 and halted.json()["results"][running]["outcome"] == "stopped", halted.text
    # creation: PVE's own words (its ID reservation is a write pmxcfs refuses), named for what they are
    refused = await api.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE})
    _problem(refused, "no quorum", "Could not reserve ID")
    assert set(cluster.node_model("pve1").containers) == {running, stopped}
    # clone snapshots its source first: that config write is refused before `pct clone` runs
    cloned = await api.post("/api/v1/lxc/instances/clone", json={"source_instance_id": stopped})
    _problem(cloned, f"unable to open file '/etc/pve/nodes/pve1/lxc/{stopped}.conf.tmp.", "Permission denied")

    cluster.power_on("pve2")
    started = await api.post("/api/v1/lxc/instances/start", json={"instance_ids": [running, stopped]})
    assert {r["outcome"] for r in started.json()["results"].values()} == {"started"}, started.text


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
    alive, lost = await _one_on_pve1_one_on_pve3_down(api, cluster, ssh_only=True)  # the cluster still sees pve3 online

    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200 and listing.headers["x-offline-nodes"] == "pve3", listing.text
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


# ----------------------------------------------------------------------------- nodes that do not answer


def _problem(response: httpx.Response, *fragments: str) -> None:
    """A 503 `{code, name, description}` whose description holds every fragment."""
    assert response.status_code == 503, response.text
    body = response.json()
    assert set(body) == {"code", "name", "description"} and body["code"] == 503, body
    assert body["name"] == "Service Unavailable", body
    for fragment in fragments:
        assert fragment in body["description"], (fragment, body)


async def test_a_node_whose_sshd_alone_died_is_listed_unreachable_as_a_powered_off_one(api, cluster):
    alive, lost = await _one_on_pve1_one_on_pve3_down(
        api, cluster, ssh_only=True
    )  # corosync still sees pve3: /cluster/status says online

    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200, listing.text
    assert {str(r["vmid"]): r["status"] for r in listing.json()} == {alive: "running", lost: "unknown"}
    assert listing.headers["x-offline-nodes"] == "pve3"
    hosts = {r["port"]: r for r in (await api.get("/api/v1/px/hosts")).json()}
    assert hosts[cluster.ports["pve3"]]["reachable"] is False
    assert "Connection refused" in hosts[cluster.ports["pve3"]]["error"]
    assert hosts[cluster.ports["pve2"]]["reachable"] is True
    shown = await api.get(f"/api/v1/lxc/instances/{lost}")
    _problem(shown, f"container {lost} is on node 'pve3' of eu-south-1/az1, which did not answer", "refused")
    _problem(await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [lost]}), "node 'pve3'")

    cluster.power_on("pve3")
    back = await api.get("/api/v1/lxc/instances")
    assert back.status_code == 200 and "x-offline-nodes" not in back.headers, back.text
    assert {str(r["vmid"]): r["status"] for r in back.json()} == {alive: "running", lost: "running"}


async def test_offline_nodes_names_only_configured_nodes_whatever_pvesh_answers(api, cluster, monkeypatch):
    import sims.pve.pvesh as pvesh_tool

    real = pvesh_tool.resources

    def hostile(model: Any, args: list[str]) -> list[dict[str, Any]]:
        forged = [
            {"id": "node/x", "type": "node", "node": "pve9\r\nSet-Cookie: owned=1", "status": "offline"},
            {"id": "node/y", "type": "node", "node": "pve7", "status": "offline"},
            {"id": "node/z", "type": "node", "node": "pve1, pve2", "status": "offline"},
        ]
        return real(model, args) + (forged if "vm" not in args else [])

    monkeypatch.setattr(pvesh_tool, "resources", hostile)
    await create_ct(api)
    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200, listing.text
    assert "x-offline-nodes" not in listing.headers and "set-cookie" not in listing.headers
    cluster.power_off("pve3")
    listing = await api.get("/api/v1/lxc/instances")
    assert listing.status_code == 200, listing.text
    assert listing.headers["x-offline-nodes"] == "pve3" and "set-cookie" not in listing.headers


def _concrete(path: str, vmid: str) -> str:
    return (
        path.replace("{instance_id}", vmid)
        .replace("{group_name}", "web")
        .replace("{snapshot_name}", "snap1")
        .replace("{template_name}", "t1")
        .replace("{container_name}", "c1")
    )


# Bodies that pass validation, so each route reaches the host (the instance is filled in).
BODIES: dict[str, dict[str, Any]] = {
    "/api/v1/px/reboot": {"confirm": True},
    "/api/v1/px/backup-lxc": {"vmid": "{id}", "storage": "local"},
    "/api/v1/px/backup": {"backup_dir": "/root/backups"},
    "/api/v1/px/image": {"instance_id": "{id}", "template_name": "img1"},
    "/api/v1/px/security-groups": {"group_name": "web"},
    "/api/v1/px/security-groups/{group_name}/rules": {"destination_port": "80"},
    "/api/v1/px/security-groups/attach": {"vmid": "{id}", "group_name": "web"},
    "/api/v1/px/security-groups/detach": {"vmid": "{id}", "group_name": "web"},
    "/api/v1/px/upload": {"local_path": "t.tar.gz", "remote_template_name": "t.tar.gz"},
    "/api/v1/px/exec": {"command": "uptime"},
    "/api/v1/lxc/instances": {"image_id": TEMPLATE},
    "/api/v1/lxc/instances/start": {"instance_ids": ["{id}"]},
    "/api/v1/lxc/instances/stop": {"instance_ids": ["{id}"]},
    "/api/v1/lxc/instances/terminate": {"instance_ids": ["{id}"]},
    "/api/v1/lxc/instances/reboot": {"instance_ids": ["{id}"]},
    "/api/v1/lxc/instances/status": {"instance_ids": ["{id}"]},
    "/api/v1/lxc/instances/scale": {"instance_ids": ["{id}"], "memory": 1024},
    "/api/v1/lxc/instances/clone": {"source_instance_id": "{id}"},
    "/api/v1/lxc/instances/{instance_id}/app/deploy": {"compose_file": "web.yml"},
    "/api/v1/lxc/instances/{instance_id}/app/update": {"compose_file": "web.yml"},
    "/api/v1/lxc/instances/{instance_id}/exec": {"command": "uptime"},
    "/api/v1/lxc/instances/{instance_id}/snapshots": {"snapshot_name": "s1"},
    "/api/v1/lxc/instances/{instance_id}/volumes/attach": {
        "volume_name": "local-lvm",
        "volume_size": "8G",
        "mount_point": "/srv",
    },
    "/api/v1/lxc/instances/{instance_id}/service": {"service_name": "nginx", "action": "status"},
    "/api/v1/lxc/instances/{instance_id}/migrate": {"target_host": "pve2", "restart": True},
    "/api/v1/lxc/instances/{instance_id}/restore": {
        "backup_file": "local:backup/vzdump-lxc-100.tar.zst",
        "force": True,
    },
    "/api/v1/lxc/instances/{instance_id}/app/run": {"docker_command": "ps"},
    "/api/v1/lxc/instances/app/remove": {"instance_ids": ["{id}"]},
}
NO_HOST = {"/api/v1/health", "/api/v1/conf", "/api/v1/conf/validate", "/api/v1/conf/backup", "/", "/api/v1/docs"}


def _body(path: str, vmid: str) -> Any:
    body = BODIES.get(path)
    if body is None:
        return None
    text = json.dumps(body).replace("{id}", vmid)
    return json.loads(text)


async def test_a_single_host_zone_that_does_not_answer_is_503_on_every_route(fresh_sim, tmp_path):
    with local_state():
        client, app = make_client(fresh_sim.config(tmp_path))
        (tmp_path / "uploads").mkdir(exist_ok=True)
        (tmp_path / "uploads" / "t.tar.gz").write_bytes(b"t")
        (tmp_path / "compose").mkdir(exist_ok=True)
        (tmp_path / "compose" / "web.yml").write_text("services:\n  web:\n    image: nginx:1.27\n")
        async with client:
            vmid = await create_ct(client)
            fresh_sim.power_off("pve", ssh_only=True)
            with open(DATA / "routes.tsv") as fh:
                rows = [r for r in csv.reader((x for x in fh if not x.startswith("#")), delimiter="\t") if r]
            where = f"eu-south-1/az1 (127.0.0.1:{fresh_sim.port}) did not answer"
            answered: dict[str, int] = {}
            for component, method, path in rows:
                if component != "lxc" or path in NO_HOST:
                    continue
                query = {"port": "80"} if path.endswith("/net-check") else None
                response = await client.request(method, _concrete(path, vmid), json=_body(path, vmid), params=query)
                answered[f"{method} {path}"] = response.status_code
                if path == "/api/v1/px/hosts":
                    assert response.status_code == 200 and response.json()[0]["reachable"] is False, response.text
                    continue
                assert response.status_code != 500, (method, path, response.text)
                if response.status_code == 503:
                    _problem(response, where, "Connection refused")
            # every route that reaches the host (all but the listing of hosts) is the 503
            assert [route for route, status in answered.items() if status != 503] == ["GET /api/v1/px/hosts"], answered
            assert answered["GET /api/v1/lxc/instances"] == 503 and answered["GET /api/v1/px/status"] == 503
            assert answered["POST /api/v1/px/upload"] == 503 and answered["POST /api/v1/px/update"] == 503
        await app.state.component.service.pool.close()


async def test_update_with_a_node_down_reports_each_node(api, cluster):
    cluster.node_model("pve2").data["apt"]["lock_holder"] = 4242  # another apt holds the lock there
    cluster.power_off("pve3")
    update = await api.post("/api/v1/px/update", json={})
    assert update.status_code == 200, update.text
    results = update.json()["results"]
    assert set(results) == {f"eu-south-1/az1@{node}" for node in NODES}
    assert results["eu-south-1/az1@pve1"] == {"outcome": "upgraded", "error": None}
    failed = results["eu-south-1/az1@pve2"]
    assert failed["outcome"] == "failed" and "Could not get lock /var/lib/apt/lists/lock" in failed["error"]
    down = results["eu-south-1/az1@pve3"]
    assert down["outcome"] == "unreachable" and "Connection refused" in down["error"]
    assert cluster.node_model("pve1").data["apt"]["upgradable"] == []
    assert "[eu-south-1/az1@pve1]" in update.json()["output"]

    # every node failed: the answer is the error (503 when none answered, 500 when one really failed)
    cluster.power_off("pve1")
    accepted = await api.post("/api/v1/px/update", json={}, headers={"Prefer": "respond-async"})
    job = await _finished(api, accepted)
    assert job["state"] == "failed" and job["error"]["status"] == 500, job
    cluster.power_off("pve2")
    _problem(await api.post("/api/v1/px/update", json={}), "pve1", "pve2", "pve3")


async def _finished(api: httpx.AsyncClient, accepted: httpx.Response) -> dict[str, Any]:
    assert accepted.status_code == 202, accepted.text

    async def done():
        job = (await api.get(accepted.headers["location"])).json()
        return job if job["state"] != "running" else None

    return await eventually(done, timeout=30, what="the job")


async def test_image_of_a_container_on_another_node_stages_and_moves_on_that_node(api, cluster):
    vmid = await create_ct(api)
    moved = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "pve2", "restart": True})
    assert moved.status_code == 200, moved.text
    image = await api.post("/api/v1/px/image", json={"instance_id": vmid, "template_name": "web-base"})
    assert image.status_code == 200, image.text
    assert "on node pve2" in image.json()["output"]
    assert cluster.node_model("pve2").host_path("/var/lib/vz/template/cache/web-base.tar.gz").is_file()
    assert not cluster.node_model("pve1").host_path("/var/lib/vz/template/cache/web-base.tar.gz").exists()
    assert not any("rayfleet-image" in line for line in cluster.commands("pve1"))
    staging = cluster.node_model("pve2").host_path("/var/tmp")
    assert [p.name for p in staging.iterdir() if p.name.startswith("rayfleet-image")] == []  # cleaned up there
    cluster.power_off("pve2")
    _problem(await api.post("/api/v1/px/image", json={"instance_id": vmid, "template_name": "x"}), "node 'pve2'")


async def test_upload_with_the_entry_down(api, cluster, tmp_path):
    uploads = tmp_path / "uploads"
    uploads.mkdir(exist_ok=True)
    (uploads / "t.tar.gz").write_bytes(b"a template")
    body = {"local_path": "t.tar.gz", "remote_template_name": "t.tar.gz"}
    cluster.power_off("pve1")
    # `local` is each node's own disk: the template must land on the entry, which is down
    _problem(await api.post("/api/v1/px/upload", json=body), "pve1", "Connection refused")
    assert not cluster.node_model("pve2").host_path("/var/lib/vz/template/cache/t.tar.gz").exists()

    # a storage every node shares: the upload goes to the next node that answers
    mount = cluster.sim.add_shared_storage("nas")
    shared = cluster.config(
        tmp_path, template_storage="nas", regions={"eu-south-1": {"availability_zones": {"az1": cluster_zone(cluster)}}}
    )
    with local_state():
        client, app = make_client(shared)
        async with client:
            sent = await client.post("/api/v1/px/upload", json=body)
            assert sent.status_code == 200, sent.text
            assert sent.json()["output"].endswith("as nas:vztmpl/t.tar.gz on node pve2.")
            for node in ("pve2", "pve3"):  # one export, seen by every node
                assert (
                    cluster.node_model(node).host_path(f"{mount}/template/cache/t.tar.gz").read_bytes() == b"a template"
                )
            for node in NODES:
                cluster.power_off(node)
            _problem(
                await client.post("/api/v1/px/upload", json=body), "no node of the cluster eu-south-1/az1 answered"
            )
        await app.state.component.service.pool.close()


async def test_files_of_a_container_on_another_node_are_staged_and_fetched_on_that_node(api, cluster, tmp_path):
    vmid = await create_ct(api)
    moved = await api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "pve2", "restart": True})
    assert moved.status_code == 200, moved.text
    backup = await api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={"download": True})
    assert backup.status_code == 200, backup.text
    local = Path(backup.json()["downloaded_to"])
    remote = cluster.node_model("pve2").host_path(backup.json()["archive"])
    assert local.read_bytes() == remote.read_bytes()

    base = f"/api/v1/lxc/instances/{vmid}/app"
    assert (await api.post(f"{base}/setup", json={"enable_nesting": True})).status_code == 200
    (tmp_path / "compose").mkdir()
    (tmp_path / "compose" / "web.yml").write_text("services:\n  web:\n    image: nginx:1.27\n")
    deploy = await api.post(f"{base}/deploy", json={"action": "install", "compose_file": "web.yml"})
    assert deploy.status_code == 200, deploy.text
    ct = cluster.node_model("pve2").containers[vmid]
    assert ct["files"]["/opt/lws/apps/web/docker-compose.yml"].startswith("services:")
    assert not list(cluster.node_model("pve2").host_path("/var/tmp").glob("lws-*"))  # staging removed there
    assert not list(cluster.node_model("pve1").host_path("/var/tmp").glob("lws-*"))

    cluster.power_off("pve2")
    _problem(await api.post(f"{base}/deploy", json={"action": "install", "compose_file": "web.yml"}), "pve2")


async def test_image_of_a_container_moved_behind_the_apis_back_fails_once_then_works(api, cluster):
    """The documented limit: staging follows the cached map; vzdump through the zone finds the
    container (and the map learns it), so only the first request after an outside migration fails."""
    vmid = await create_ct(api)
    assert (await api.get(f"/api/v1/lxc/instances/{vmid}")).status_code == 200  # the map: pve1
    assert (await _ssh(cluster, "pve1", f"pct migrate {vmid} pve3 --restart")).exit_status == 0
    first = await api.post("/api/v1/px/image", json={"instance_id": vmid, "template_name": "moved"})
    assert first.status_code == 500 and "does not exist" in first.json()["details"], first.text
    assert not [p for p in cluster.node_model("pve1").host_path("/var/tmp").iterdir() if "rayfleet-image" in p.name]
    again = await api.post("/api/v1/px/image", json={"instance_id": vmid, "template_name": "moved"})
    assert again.status_code == 200 and "on node pve3" in again.json()["output"], again.text


async def test_a_node_the_cluster_reports_offline_is_not_probed_by_listings(cluster, tmp_path):
    taken: list[asyncio.StreamWriter] = []

    async def hung(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        taken.append(writer)  # pve3's SSH port as a hung host: TCP taken, no banner ever

    silent = await asyncio.start_server(hung, "127.0.0.1", 0)
    zone = cluster_zone(cluster)
    zone["nodes"]["pve3"] = {"port": silent.sockets[0].getsockname()[1]}
    zone["connect_timeout"] = 1
    with local_state():
        client, app = make_client(
            cluster.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})
        )
        async with client:
            online = await client.get("/api/v1/lxc/instances")  # corosync sees pve3: it is probed
            assert online.status_code == 200 and online.headers["x-offline-nodes"] == "pve3", online.text
            assert len(taken) == 1
            cluster.power_off("pve3")  # now the cluster reports it offline: no more dialling
            for _ in range(2):
                offline = await client.get("/api/v1/lxc/instances")
                assert offline.status_code == 200 and offline.headers["x-offline-nodes"] == "pve3"
            assert len(taken) == 1
        await app.state.component.service.pool.close()
    for writer in taken:
        writer.close()
    silent.close()


async def test_without_quorum_every_config_write_answers_503_and_each_container_of_a_bulk_action_says_so(api, cluster):
    """A node without quorum refuses every write to /etc/pve (`pct set`, snapshots, rollback,
    destroy: PVE's `unable to open file '/etc/pve/...' - Permission denied`): 503 with the host's
    line, per container in a bulk action; nothing changed."""
    first = await create_ct(api)
    second = await create_ct(api)
    assert (await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [second]})).status_code == 200
    assert (await api.post(f"/api/v1/lxc/instances/{first}/snapshots", json={"snapshot_name": "s0"})).status_code == 200
    cluster.power_off("pve2")
    cluster.power_off("pve3")
    words = "- Permission denied"
    configs = {vmid: dict(cluster.node_model("pve1").containers[vmid]["config"]) for vmid in (first, second)}

    for method, path, body in [
        ("POST", f"/api/v1/lxc/instances/{first}/config", {"onboot": True, "tags": ["web"]}),
        ("POST", f"/api/v1/lxc/instances/{first}/snapshots", {"snapshot_name": "s1"}),
        ("DELETE", f"/api/v1/lxc/instances/{first}/snapshots/s0", None),
        ("POST", f"/api/v1/lxc/instances/{first}/snapshots/s0/rollback", {"start": True}),
        ("POST", "/api/v1/lxc/instances/scale", {"instance_ids": [first], "memory": 1024}),
        ("POST", "/api/v1/lxc/instances/terminate", {"instance_ids": [second]}),
    ]:
        answer = await api.request(method, path, json=body)
        _problem(answer, "unable to open file '/etc/pve/nodes/pve1/lxc/", words)

    scaled = await api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [first, second], "cpucores": 2})
    assert scaled.status_code == 503, scaled.text  # every container failed alike: the most severe, 503
    # neither can be destroyed: each container's line
    both = await api.post("/api/v1/lxc/instances/terminate", json={"instance_ids": [first, second]})
    _problem(both, f"{first}: unable to open file '/etc/pve/nodes/pve1/lxc/{first}.conf.tmp.", words)
    _problem(both, f"{second}: unable to open file '/etc/pve/nodes/pve1/lxc/{second}.conf.tmp.")
    assert set(cluster.node_model("pve1").containers) == {first, second}
    assert {vmid: cluster.node_model("pve1").containers[vmid]["config"] for vmid in (first, second)} == configs
    assert list(cluster.node_model("pve1").containers[first]["snapshots"]) == ["s0"]

    cluster.power_on("pve2")
    edited = await api.post(f"/api/v1/lxc/instances/{first}/config", json={"onboot": True})
    assert edited.status_code == 200, edited.text
