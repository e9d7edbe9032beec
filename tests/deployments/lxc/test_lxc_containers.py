"""Container routes against pve-sim over real SSH: what reaches the host and what comes back."""

from __future__ import annotations

import asyncio

from tests.deployments.lxc.simenv import TEMPLATE, create_ct


def cfg(sim, vmid):
    return sim.model.containers[vmid]["config"]


async def test_create_two_from_template_uses_nextid_and_anchor_flags(fresh_api, fresh_sim):
    response = await fresh_api.post(
        "/api/v1/lxc/instances",
        json={
            "image_id": TEMPLATE,
            "count": 2,
            "hostname": "web",
            "size": "medium",
            "features": "nesting=1",
            "unprivileged": True,
            "dns": "1.1.1.1,9.9.9.9",
            "password": "hunter22!",
        },
    )
    assert response.status_code == 200, response.text
    ids = response.json()["instance_ids"]
    assert ids == ["100", "101"]
    commands = fresh_sim.commands()
    assert sum("pvesh get /cluster/nextid" in c for c in commands) == 2
    create = next(c for c in commands if "pct create 100" in c)
    assert (
        "--memory 1024 --cpulimit 2 --net0 name=eth0,bridge=vmbr0,ip=dhcp --rootfs local-lvm:16 --onboot 1 "
        "--hostname web-100 --features nesting=1 --unprivileged 1 --nameserver '1.1.1.1 9.9.9.9'"
    ) in create
    assert all("hunter22" not in c for c in commands)  # the password goes over stdin only
    for vmid in ids:
        assert fresh_sim.model.containers[vmid]["status"] == "running"
        assert fresh_sim.model.containers[vmid].get("password_hash")


async def test_static_ip_and_storage_size(fresh_api, fresh_sim):
    response = await fresh_api.post(
        "/api/v1/lxc/instances",
        json={
            "image_id": TEMPLATE,
            "ip": "10.1.2.3",
            "netmask": "255.255.0.0",
            "gateway": "10.1.0.1",
            "storage_size": "20G",
        },
    )
    assert response.status_code == 200, response.text
    config = cfg(fresh_sim, "100")
    assert "ip=10.1.2.3/16" in config["net0"].split(",") and "gw=10.1.0.1" in config["net0"].split(",")
    assert config["rootfs"].endswith("size=20G")
    response = await fresh_api.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE, "ip": "10.1.2.4", "count": 2})
    assert response.status_code == 400


async def test_list_get_and_bulk_lifecycle(fresh_api, fresh_sim):
    a = await create_ct(fresh_api)
    b = await create_ct(fresh_api)
    listing = (await fresh_api.get("/api/v1/lxc/instances")).json()
    assert {str(c["vmid"]) for c in listing} == {a, b}
    detail = await fresh_api.get(f"/api/v1/lxc/instances/{a}")
    assert detail.status_code == 200 and detail.json()["hostname"] == f"CT{a}"
    stop = await fresh_api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [a, b]})
    assert stop.status_code == 200 and stop.json() == {
        "output": f"Instance {a} stopped.\nInstance {b} stopped.",
        "results": {
            a: {"outcome": "stopped", "status": "stopped", "error": None},
            b: {"outcome": "stopped", "status": "stopped", "error": None},
        },
    }
    start = await fresh_api.post("/api/v1/lxc/instances/start", json={"instance_ids": [a, b]})
    assert start.status_code == 200
    again = await fresh_api.post("/api/v1/lxc/instances/start", json={"instance_ids": [a]})
    assert again.status_code == 200 and again.json() == {
        "output": f"Instance {a} already running.",
        "results": {a: {"outcome": "already running", "status": "running", "error": None}},
    }
    reboot = await fresh_api.post("/api/v1/lxc/instances/reboot", json={"instance_ids": [a]})
    assert reboot.status_code == 200
    status = await fresh_api.post("/api/v1/lxc/instances/status", json={"instance_ids": [a, b]})
    snap = status.json()
    assert snap[a]["loadavg"].count(" ") == 4 and snap[a]["memory"]["MemTotal_kb"] == 512 * 1024
    assert "Use%" in snap[b]["disk"] and snap[b]["swap"].startswith("Filename")
    assert snap[a]["state"] == "running" and snap[a]["error"] is None
    gone = await fresh_api.post("/api/v1/lxc/instances/terminate", json={"instance_ids": [b]})
    assert gone.status_code == 200 and b not in fresh_sim.model.containers
    assert any(c.endswith(f"pct destroy {b} --purge") for c in fresh_sim.commands())


async def test_scale_sets_limits_and_resizes(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    response = await fresh_api.post(
        "/api/v1/lxc/instances/scale",
        json={
            "instance_ids": [vmid],
            "memory": 2048,
            "cpulimit": 2,
            "cpucores": 2,
            "storage_size": "+8G",
            "net_limit": 10,
        },
    )
    assert response.status_code == 200, response.text
    config = cfg(fresh_sim, vmid)
    assert (config["memory"], config["cpulimit"], config["cores"]) == (2048, 2, 2)
    assert config["rootfs"].endswith("size=16G") and "rate=10" in config["net0"].split(",")
    response = await fresh_api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [vmid], "storage_size": "32G"})
    assert response.status_code == 200 and cfg(fresh_sim, vmid)["rootfs"].endswith("size=32G")
    assert (await fresh_api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [vmid]})).status_code == 400


async def test_scale_refuses_a_bad_value_for_any_container_before_changing_one(fresh_api, fresh_sim):
    first = await create_ct(fresh_api)
    second = await create_ct(fresh_api)
    async with await fresh_sim.connect() as conn:
        assert (await conn.run(f"pct set {second} --delete net0")).exit_status == 0
    before = cfg(fresh_sim, first)["memory"]
    body = {"instance_ids": [first, second], "memory": before * 2, "net_limit": 10}
    refused = await fresh_api.post("/api/v1/lxc/instances/scale", json=body)
    assert refused.status_code == 400 and f"CT {second} has no net0" in refused.json()["error"], refused.text
    assert cfg(fresh_sim, first)["memory"] == before and "rate=" not in cfg(fresh_sim, first)["net0"]
    assert not [line for line in fresh_sim.commands() if f"pct set {first} " in line]


async def test_snapshots_volumes_service_exec(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    base = f"/api/v1/lxc/instances/{vmid}"
    assert (await fresh_api.post(f"{base}/snapshots", json={"snapshot_name": "before"})).status_code == 200
    snaps = (await fresh_api.get(f"{base}/snapshots")).json()
    assert [s["name"] for s in snaps] == ["before", "current"]
    dup = await fresh_api.post(f"{base}/snapshots", json={"snapshot_name": "before"})
    assert dup.status_code == 409 and "already used" in dup.json()["description"]
    assert (await fresh_api.delete(f"{base}/snapshots/before")).status_code == 200
    assert (await fresh_api.delete(f"{base}/snapshots/9bad")).status_code == 400
    attach = await fresh_api.post(
        f"{base}/volumes/attach", json={"volume_name": "local-lvm", "volume_size": "16G", "mount_point": "/data"}
    )
    assert attach.status_code == 200
    assert cfg(fresh_sim, vmid)["mp0"].startswith("local-lvm:vm-") and "mp=/data" in cfg(fresh_sim, vmid)["mp0"]
    detach = await fresh_api.post(f"{base}/volumes/detach", json={"volume_name": "whatever"})
    assert detach.status_code == 200 and "mp0" not in cfg(fresh_sim, vmid)
    svc = await fresh_api.post(f"{base}/service", json={"action": "restart", "service_name": "ssh"})
    assert svc.status_code == 200
    missing = await fresh_api.post(f"{base}/service", json={"action": "start", "service_name": "nginx"})
    assert missing.status_code == 500 and missing.json()["return_code"] == 5
    run = await fresh_api.post(f"{base}/exec", json={"command": ["echo", "a  b", "c"]})
    assert run.json() == {"output": "a  b c"}
    assert fresh_sim.commands()[-1] == f"timeout -k 5 3600 pct exec {vmid} -- echo 'a  b' c"


async def test_clone_backup_restore_migrate(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api, hostname="db")
    clone = await fresh_api.post("/api/v1/lxc/instances/clone", json={"source_instance_id": vmid, "full": True})
    assert clone.status_code == 200, clone.text
    target = clone.json()["instance_id"]
    assert cfg(fresh_sim, target)["hostname"] == f"db-{vmid}"
    assert fresh_sim.model.containers[vmid]["snapshots"] == {}  # the temporary snapshot is gone
    backup = await fresh_api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={})
    assert backup.status_code == 200, backup.text
    archive = backup.json()["archive"]
    assert archive.startswith(f"/var/lib/vz/dump/vzdump-lxc-{vmid}-") and archive.endswith(".tar.zst")
    assert any(
        f"vzdump {vmid} --mode snapshot --compress zstd --dumpdir /var/lib/vz/dump" in c for c in fresh_sim.commands()
    )
    dl = await fresh_api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={"compress": "gzip", "download": True})
    assert dl.status_code == 200
    from pathlib import Path

    assert Path(dl.json()["downloaded_to"]).stat().st_size > 0
    restore = await fresh_api.post(
        f"/api/v1/lxc/instances/{vmid}/restore", json={"backup_file": archive, "force": True, "no_start": True}
    )
    assert restore.status_code == 200, restore.text
    assert fresh_sim.model.containers[vmid]["status"] == "stopped"
    assert fresh_sim.model.host_path(archive).exists()
    migrate = await fresh_api.post(f"/api/v1/lxc/instances/{target}/migrate", json={"target_host": "pve2"})
    assert migrate.status_code == 200 and "migration finished successfully" in migrate.json()["output"]
    assert target not in fresh_sim.model.containers
    bad = await fresh_api.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "nowhere"})
    assert bad.status_code == 404 and bad.json() == {"error": "Not Found", "message": "no such cluster node 'nowhere'"}


async def test_diagnostics(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    base = f"/api/v1/lxc/instances/{vmid}"
    assert "Use%" in (await fresh_api.get(f"{base}/storage")).json()["output"]
    check = (await fresh_api.get(f"{base}/scale-check")).json()
    assert check["instance_id"] == vmid and check["recommendations"]
    open_port = (await fresh_api.get(f"{base}/net-check", params={"protocol": "tcp", "port": "22"})).json()
    closed = (await fresh_api.get(f"{base}/net-check", params={"port": 8080})).json()
    assert open_port["open"] is True and closed["open"] is False
    info = (await fresh_api.get(f"{base}/info")).json()
    assert info["hostname"] == f"CT{vmid}" and info["host_node"] == "pve" and info["dns_servers"]
    assert (await fresh_api.get(f"{base}/public-ip")).json() == {"output": "203.0.113.47"}
    ct = fresh_sim.model.containers[vmid]
    ct["disk_used_pct"], ct["dns_ok"] = 91, False
    report = (await fresh_api.get(f"{base}/health-check")).json()
    assert report["healthy"] is False and report["actions"] == []
    fixed = (await fresh_api.get(f"{base}/health-check", params={"fix": "true"})).json()
    assert fixed["actions"] == ["deleted files older than 7 days in /tmp and /var/tmp", "restarted networking"]
    assert fixed["checks"]["dns"] is True and "/tmp/fresh.txt" in ct["tmp_files"]
    assert "/tmp/old-cache.bin" not in ct["tmp_files"]
    full = (await fresh_api.get(f"{base}/report")).json()
    assert full["config"]["hostname"] == f"CT{vmid}" and full["listening"][0]["port"] == 22
    res = (await fresh_api.get(f"{base}/resources")).json()
    assert res["maxmem"] == 512 * 1024**2 and "Mem:" in res["free"]
    scan = (await fresh_api.get(f"{base}/sec/scan", params={"scan_type": "full"})).json()
    assert scan["pending_updates"] == ["openssl"] and scan["os"].startswith("Debian")
    disc = (await fresh_api.get("/api/v1/sec/discovery", params={"lxc_id": vmid})).json()
    assert disc[0]["instance_id"] == vmid and disc[0]["listening"]


async def test_one_operation_at_a_time_per_container(tmp_path):
    """With a slow host, concurrent snapshots of one container are serialised, never 'CT is locked'."""
    from rayfleet.state import local_state
    from tests.deployments.lxc.simenv import SimEnv, make_client

    sim = SimEnv(tmp_path / "slow", op_delay=0.3)
    try:
        with local_state():
            client, app = make_client(sim.config(tmp_path))
            async with client:
                vmid = await create_ct(client)
                results = await asyncio.gather(
                    *(
                        client.post(f"/api/v1/lxc/instances/{vmid}/snapshots", json={"snapshot_name": f"s{i}"})
                        for i in range(3)
                    )
                )
                created = await asyncio.gather(
                    *(client.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE}) for _ in range(3))
                )
            await app.state.component.service.pool.close()
        assert [r.status_code for r in results] == [200, 200, 200], [r.text for r in results]
        assert set(sim.model.containers[vmid]["snapshots"]) == {"s0", "s1", "s2"}
        ids = [r.json()["instance_ids"][0] for r in created]
        assert len(set(ids)) == 3, ids
    finally:
        sim.stop()


async def test_bulk_actions_report_each_container_and_stopped_is_a_status(fresh_api, fresh_sim):
    """One stopped container in a batch is reported as stopped; the others are still acted on."""
    up = await create_ct(fresh_api)
    down = await create_ct(fresh_api)
    assert (await fresh_api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [down]})).status_code == 200
    before = len(fresh_sim.commands())

    reboot = await fresh_api.post("/api/v1/lxc/instances/reboot", json={"instance_ids": [up, down]})
    assert reboot.status_code == 200, reboot.text
    assert reboot.json()["results"] == {
        up: {"outcome": "rebooted", "status": "running", "error": None},
        down: {"outcome": "not rebooted: stopped", "status": "stopped", "error": None},
    }
    sent = fresh_sim.commands()[before:]
    assert any(c.endswith(f"pct reboot {up}") for c in sent) and not any(f"pct reboot {down}" in c for c in sent)

    status = await fresh_api.post("/api/v1/lxc/instances/status", json={"instance_ids": [up, down]})
    assert status.status_code == 200, status.text
    body = status.json()
    assert body[down] == {
        "state": "stopped",
        "loadavg": None,
        "memory": None,
        "disk": None,
        "swap": None,
        "error": None,
    }
    assert body[up]["state"] == "running" and body[up]["memory"]["MemTotal_kb"] == 512 * 1024

    stop = await fresh_api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [up, down]})
    assert stop.json()["results"][down]["outcome"] == "already stopped"
    assert fresh_sim.model.containers[up]["status"] == "stopped"


async def test_a_bulk_failure_is_reported_for_its_container_only(fresh_api, fresh_sim):
    ok = await create_ct(fresh_api)
    locked = await create_ct(fresh_api)
    fresh_sim.model.containers[locked]["lock"] = "backup"
    fresh_sim.model.save()
    response = await fresh_api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [ok, locked]})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert results[ok] == {"outcome": "stopped", "status": "stopped", "error": None}
    assert results[locked]["outcome"] == "failed" and "locked" in results[locked]["error"]
    only_failures = await fresh_api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [locked]})
    assert only_failures.status_code == 409 and "locked" in only_failures.json()["description"]
