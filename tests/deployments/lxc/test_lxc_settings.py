"""Snapshot rollback, config edit (onboot, tags, description, startup order), mount points mp0-mp9
and IPv6, through pct/pvesh against pve-sim."""

from __future__ import annotations

import pytest

from tests.deployments.lxc.simenv import create_ct
from tests.sims.pve.simenv import TEMPLATE


async def test_rollback_restores_the_snapshot_config_and_optionally_starts(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    base = f"/api/v1/lxc/instances/{vmid}"
    assert (await fresh_api.post(f"{base}/snapshots", json={"snapshot_name": "before"})).status_code == 200
    scaled = await fresh_api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [vmid], "memory": 2048})
    assert scaled.status_code == 200
    ct = fresh_sim.model.containers[vmid]
    assert ct["config"]["memory"] == 2048 and ct["status"] == "running"

    back = await fresh_api.post(f"{base}/snapshots/before/rollback")
    assert back.status_code == 200, back.text
    assert ct["config"]["memory"] == 512 and ct["status"] == "stopped"
    assert any(c.endswith(f"pct rollback {vmid} before") for c in fresh_sim.commands())

    started = await fresh_api.post(f"{base}/snapshots/before/rollback", json={"start": True})
    assert started.status_code == 200 and ct["status"] == "running"
    assert any(c.endswith(f"pct rollback {vmid} before --start 1") for c in fresh_sim.commands())

    missing = await fresh_api.post(f"{base}/snapshots/nosuch/rollback")
    assert missing.status_code == 404
    assert (await fresh_api.post(f"{base}/snapshots/bad%20name/rollback")).status_code == 400
    assert (await fresh_api.post(f"{base}/snapshots/before/rollback", json={"start": "yes"})).status_code == 400


async def test_config_edit_sets_and_clears_onboot_tags_description_startup(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    url = f"/api/v1/lxc/instances/{vmid}/config"
    body = {
        "onboot": False,
        "tags": ["web", "prod", "web"],
        "description": "front end\nowner: ops",
        "startup_order": 2,
        "startup_up": 30,
        "startup_down": 60,
    }
    edited = await fresh_api.post(url, json=body)
    assert edited.status_code == 200, edited.text
    config = edited.json()
    assert config["onboot"] == 0 and config["tags"] == "web;prod"
    assert config["description"] == "front end\nowner: ops" and config["startup"] == "order=2,up=30,down=60"
    assert fresh_sim.model.containers[vmid]["config"]["startup"] == "order=2,up=30,down=60"

    cleared = await fresh_api.post(url, json={"tags": [], "description": "", "clear_startup": True})
    assert cleared.status_code == 200
    assert not {"tags", "description", "startup"} & set(cleared.json())
    assert cleared.json()["onboot"] == 0  # left out: unchanged


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"tags": ["Has Space"]},
        {"tags": "web"},
        {"tags": ["a;b"]},
        {"description": "bell\x07"},
        {"description": "x" * 9000},
        {"startup_order": -1},
        {"startup_up": 5},
        {"startup_order": "\u0661"},
        {"clear_startup": True, "startup_order": 1},
        {"onboot": "yes"},
        {"ipv6": "2001:db8::1"},
        {"ipv6": "10.0.0.1/24"},
        {"ipv6": "auto", "gateway6": "2001:db8::1"},
        {"gateway6": "2001:db8::1"},
        {"ipv6": "2001:db8::10/64", "gateway6": "fe80::zz"},
    ],
)
async def test_config_edit_refuses_bad_values_before_any_host_command(fresh_api, fresh_sim, body):
    vmid = await create_ct(fresh_api)
    before = len(fresh_sim.commands())
    response = await fresh_api.post(f"/api/v1/lxc/instances/{vmid}/config", json=body)
    assert response.status_code == 400, (body, response.text)
    assert not [c for c in fresh_sim.commands()[before:] if "pct set" in c]


async def test_ipv6_on_create_and_edit(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api, ipv6="2001:db8::10/64", gateway6="2001:db8::1")
    net0 = fresh_sim.model.containers[vmid]["config"]["net0"]
    assert "ip6=2001:db8::10/64" in net0 and "gw6=2001:db8::1" in net0 and "ip=dhcp" in net0
    hwaddr = next(p for p in net0.split(",") if p.startswith("hwaddr="))
    edited = await fresh_api.post(f"/api/v1/lxc/instances/{vmid}/config", json={"ipv6": "auto"})
    assert edited.status_code == 200, edited.text
    net0 = edited.json()["net0"]
    assert "ip6=auto" in net0 and "gw6=" not in net0 and hwaddr in net0 and "bridge=vmbr0" in net0
    refused = await fresh_api.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE, "ipv6": "fe80::1"})
    assert refused.status_code == 400 and "ipv6" in refused.json()["error"]


async def test_mount_points_use_free_slots_up_to_mp9(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    url = f"/api/v1/lxc/instances/{vmid}/volumes"
    for i in range(10):
        body = {"volume_name": "local-lvm", "volume_size": "1G", "mount_point": f"/data{i}"}
        attached = await fresh_api.post(f"{url}/attach", json=body)
        assert attached.status_code == 200 and f"(mp{i})" in attached.json()["output"], attached.text
    config = fresh_sim.model.containers[vmid]["config"]
    assert all(f"mp=/data{i}" in config[f"mp{i}"] for i in range(10))
    full = await fresh_api.post(
        f"{url}/attach", json={"volume_name": "local-lvm", "volume_size": "1G", "mount_point": "/more"}
    )
    assert full.status_code == 409
    same_path = await fresh_api.post(f"{url}/detach", json={"slot": "mp3"})
    assert same_path.status_code == 200 and "mp3" not in config and config["unused0"].startswith("local-lvm:")
    dup = await fresh_api.post(
        f"{url}/attach", json={"volume_name": "local-lvm", "volume_size": "1G", "mount_point": "/data4"}
    )
    assert dup.status_code == 400 and "already mounted" in dup.json()["error"]
    chosen = await fresh_api.post(
        f"{url}/attach", json={"volume_name": "local-lvm", "volume_size": "2G", "mount_point": "/x", "slot": "mp3"}
    )
    assert chosen.status_code == 200 and "mp=/x" in config["mp3"]
    taken = await fresh_api.post(
        f"{url}/attach", json={"volume_name": "local-lvm", "volume_size": "1G", "mount_point": "/y", "slot": "mp3"}
    )
    assert taken.status_code == 409
    assert (await fresh_api.post(f"{url}/detach", json={"slot": "mp10"})).status_code == 400
    config.pop("mp5")
    fresh_sim.model.save()
    assert (await fresh_api.post(f"{url}/detach", json={"slot": "mp5"})).status_code == 404
