"""A cluster that lost quorum, through the API: what an operator sees.

Two nodes of three powered off leave pve1 without quorum. pmxcfs is then read-only: the host refuses
every write (`pvesh`'s firewall writes at their cfs lock, `pct`'s config writes, vzdump's backup lock,
start, migrate, clone), and reads keep working. A synchronous write answers 503 `{code, name,
description}` naming quorum; a job refused for it ends `failed` with that 503 as its error and
releases the container. Once a node is back (two of three: quorate), everything works again.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.deployments.lxc import test_lxc_cluster as clustered
from tests.deployments.lxc.simenv import TEMPLATE, SimEnv, create_ct
from tests.polling import eventually

cluster = clustered.cluster
api = clustered.api
GROUPS = "/api/v1/px/security-groups"


def _no_quorum(answer: httpx.Response, *fragments: str) -> None:
    """A 503 problem whose description names quorum and holds the host's refusing line, not its retries."""
    clustered._problem(answer, "no quorum", *fragments)
    assert "trying to acquire" not in answer.json()["description"], answer.text


def _lose_quorum(cluster: SimEnv) -> None:
    cluster.power_off("pve2")
    cluster.power_off("pve3")


async def test_without_quorum_security_group_writes_answer_503_naming_quorum_and_reads_still_work(api, cluster):
    vmid = await create_ct(api)
    rule = {"protocol": "tcp", "destination_port": "80"}
    assert (await api.post(GROUPS, json={"group_name": "web"})).status_code == 200
    assert (await api.post(f"{GROUPS}/web/rules", json=rule)).status_code == 200
    attached = await api.post(f"{GROUPS}/attach", json={"group_name": "web", "vmid": vmid})
    assert attached.status_code == 200, attached.text
    _lose_quorum(cluster)
    model = cluster.node_model("pve1")
    before = json.dumps([model.data["firewall"], model.containers[vmid]], sort_keys=True)

    listed = await api.get(GROUPS)
    assert listed.status_code == 200 and [g["group"] for g in listed.json()] == ["web"], listed.text
    assert (await api.get(f"/api/v1/lxc/instances/{vmid}")).status_code == 200
    cluster_lock, ct_lock = "cfs-lock 'firewall-cluster' error: no quorum!", f"cfs-lock 'firewall-vm-{vmid}' error"
    for method, path, body, params, words in [
        ("POST", GROUPS, {"group_name": "db"}, None, cluster_lock),
        ("POST", f"{GROUPS}/web/rules", {"protocol": "udp", "destination_port": "53"}, None, cluster_lock),
        ("DELETE", f"{GROUPS}/web/rules", rule, None, cluster_lock),
        ("DELETE", f"{GROUPS}/web", None, {"force": "true"}, cluster_lock),
        ("POST", f"{GROUPS}/attach", {"group_name": "web", "vmid": vmid, "enable_firewall": True}, None, ct_lock),
        ("POST", f"{GROUPS}/detach", {"group_name": "web", "vmid": vmid}, None, ct_lock),
    ]:
        _no_quorum(await api.request(method, path, json=body, params=params), words)
    assert json.dumps([model.data["firewall"], model.containers[vmid]], sort_keys=True) == before

    cluster.power_on("pve2")
    assert (await api.post(GROUPS, json={"group_name": "db"})).status_code == 200
    detached = await api.post(f"{GROUPS}/detach", json={"group_name": "web", "vmid": vmid})
    assert detached.status_code == 200 and model.containers[vmid]["firewall"]["rules"] == [], detached.text


async def _job(api: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    accepted = await api.post(path, json=body, headers={"Prefer": "respond-async"})
    assert accepted.status_code == 202, accepted.text

    async def finished() -> dict[str, Any] | None:
        job = (await api.get(accepted.headers["location"])).json()
        return job if job["state"] != "running" else None

    done: dict[str, Any] = await eventually(finished, timeout=30, what=f"the job of {path}")
    return done


async def test_without_quorum_jobs_fail_naming_quorum_and_release_the_container(api, cluster):
    vmid = await create_ct(api)
    base = f"/api/v1/lxc/instances/{vmid}"
    made = await api.post(f"{base}/backup", json={})
    assert made.status_code == 200, made.text
    archive = made.json()["archive"]
    _lose_quorum(cluster)
    ct = cluster.node_model("pve1").containers[vmid]

    for path, body, words in [
        (f"{base}/backup", {}, f"unable to open file '/etc/pve/nodes/pve1/lxc/{vmid}.conf.tmp."),
        (f"{base}/migrate", {"target_host": "pve2", "restart": True}, "cluster not ready - no quorum?"),
        (f"{base}/restore", {"backup_file": archive, "force": True}, "Permission denied"),
    ]:
        job = await _job(api, path, body)
        assert job["state"] == "failed", job
        assert job["error"]["status"] == 503 and "no quorum" in job["error"]["error"], job["error"]
        assert words in job["error"]["error"], job["error"]
        assert ct["lock"] is None and vmid in cluster.node_model("pve1").containers
        # the container's lease went with the job: a stop (which needs no quorum) is not kept waiting
        stopped = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [vmid]})
        assert stopped.status_code == 200, stopped.text
    # a synchronous backup answers what the job recorded
    _no_quorum(await api.post(f"{base}/backup", json={}), f"{vmid}.conf.tmp.", "Permission denied")

    cluster.power_on("pve3")
    assert (await _job(api, f"{base}/backup", {}))["state"] == "succeeded"
    restored = await _job(api, f"{base}/restore", {"backup_file": archive, "force": True})
    assert restored["state"] == "succeeded", restored
    moved = await _job(api, f"{base}/migrate", {"target_host": "pve3", "restart": True})
    assert moved["state"] == "succeeded" and vmid in cluster.node_model("pve3").containers, moved


async def test_without_quorum_a_create_answers_503_naming_quorum_though_pve_says_the_id_is_taken(api, cluster):
    """PVE reserves a new guest's ID by creating its config in /etc/pve and takes any failure of that for
    another node's reservation (`Could not reserve ID N, already taken`); the API asks the cluster
    (`/cluster/status`, readable without quorum) and answers the 503 naming quorum."""
    kept = await create_ct(api)
    _lose_quorum(cluster)
    _no_quorum(await api.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE}), "Could not reserve ID")
    job = await _job(api, "/api/v1/lxc/instances", {"image_id": TEMPLATE})
    assert job["state"] == "failed" and job["error"]["status"] == 503, job
    assert "no quorum" in job["error"]["error"] and "Could not reserve ID" in job["error"]["error"], job["error"]
    assert set(cluster.node_model("pve1").containers) == {kept}
    cluster.power_on("pve2")
    assert len({kept, await create_ct(api)}) == 2
