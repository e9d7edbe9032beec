"""Host, template, firewall, configuration and compose-application routes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.deployments.lxc.simenv import API_KEY, create_ct


async def test_conf_routes(api, tmp_path):
    conf = (await api.get("/api/v1/conf")).json()
    assert conf["regions"]["eu-south-1"]["availability_zones"]["az1"]["host"] == "127.0.0.1"
    assert (await api.post("/api/v1/conf/validate")).json()["output"].startswith("Configuration is valid")
    saved = await api.post(
        "/api/v1/conf/backup", json={"destination_path": "nightly/", "timestamp": True, "compress": True}
    )
    assert saved.status_code == 200
    path = Path(saved.json()["output"].split(" to ")[1].split(" (")[0])
    assert path.parent == tmp_path / "conf-backups" / "nightly" and path.name.endswith(".yaml.gz")
    escape = await api.post("/api/v1/conf/backup", json={"destination_path": "../../etc/x"})
    assert escape.status_code == 400
    assert API_KEY.encode() not in path.read_bytes()


async def test_host_routes(fresh_api, fresh_sim):
    hosts = (await fresh_api.get("/api/v1/px/hosts")).json()
    assert hosts[0]["reachable"] is True and hosts[0]["node"] == "pve" and hosts[0]["az"] == "az1"
    status = (await fresh_api.get("/api/v1/px/status", params={"region": "eu-south-1", "az": "az1"})).json()
    assert "MemTotal" in status["output"] and "Filesystem" in status["output"]
    assert (await fresh_api.get("/api/v1/px/status", params={"region": "nowhere"})).status_code == 400
    templates = (await fresh_api.get("/api/v1/px/templates")).json()
    assert {"volid": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", "size": "126.00MB"} in templates
    assert "Quorate:          Yes" in (await fresh_api.get("/api/v1/px/clusters")).json()["output"]
    assert (await fresh_api.post("/api/v1/px/reboot", json={})).status_code == 400
    assert (await fresh_api.post("/api/v1/px/reboot", json={"confirm": True})).status_code == 200
    update = await fresh_api.post("/api/v1/px/update")
    assert update.status_code == 200 and "3 upgraded" in update.json()["output"]
    assert fresh_sim.model.data["apt"]["upgradable"] == []
    stop = await fresh_api.post("/api/v1/px/cluster/stop", json={})
    assert stop.status_code == 200 and fresh_sim.model.data["services"]["corosync"] == "inactive"
    down = await fresh_api.get("/api/v1/px/clusters")
    assert down.status_code == 500 and down.json()["return_code"] == 111
    for verb in ("start", "restart"):
        assert (await fresh_api.post(f"/api/v1/px/cluster/{verb}", json={})).status_code == 200
    backup = await fresh_api.post("/api/v1/px/backup", json={"backup_dir": "/root/cfg"})
    assert backup.status_code == 200
    assert list(fresh_sim.model.host_path("/root/cfg").glob("proxmox-backup-*.tar.gz"))


async def test_px_exec_is_audited(fresh_api, fresh_sim, tmp_path):
    response = await fresh_api.post("/api/v1/px/exec", json={"command": "pct list", "ignored": 1})
    assert response.status_code == 200 and response.json()["output"].startswith("VMID")
    record = json.loads((tmp_path / "audit.log").read_text().splitlines()[-1])
    assert record["event"] == "px.exec" and record["argv"] == ["pct", "list"] and record["return_code"] == 0
    assert API_KEY not in json.dumps(record) and len(record["key_fingerprint"]) == 16


async def test_templates_images_upload(fresh_api, fresh_sim, tmp_path):
    vmid = await create_ct(fresh_api)
    image = await fresh_api.post("/api/v1/px/image", json={"instance_id": vmid, "template_name": "golden-web"})
    assert image.status_code == 200, image.text
    assert fresh_sim.model.host_path("/var/lib/vz/template/cache/golden-web.tar.gz").is_file()
    assert fresh_sim.model.containers[vmid]["status"] == "running"
    assert (await fresh_api.post("/api/v1/px/image", json={"instance_id": vmid})).status_code == 400
    gone = await fresh_api.delete("/api/v1/px/image/golden-web")
    assert gone.status_code == 200
    assert not fresh_sim.model.host_path("/var/lib/vz/template/cache/golden-web.tar.gz").exists()
    again = await fresh_api.delete("/api/v1/px/image/golden-web")
    assert again.status_code == 404 and "does not exist" in again.json()["message"]
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "mine.tar.gz").write_bytes(b"x" * 1000)
    up = await fresh_api.post(
        "/api/v1/px/upload", json={"local_path": "mine.tar.gz", "remote_template_name": "mine.tar.gz"}
    )
    assert up.status_code == 200, up.text
    assert fresh_sim.model.host_path("/var/lib/vz/template/cache/mine.tar.gz").stat().st_size == 1000
    escape = await fresh_api.post(
        "/api/v1/px/upload", json={"local_path": "/etc/passwd", "remote_template_name": "p.tar.gz"}
    )
    assert escape.status_code == 400
    hostile = await fresh_api.post(
        "/api/v1/px/upload", json={"local_path": "mine.tar.gz", "remote_template_name": "../../etc/x.tar.gz"}
    )
    assert hostile.status_code == 400
    backup = await fresh_api.post("/api/v1/px/backup-lxc", json={"vmid": vmid, "storage": "local", "mode": "suspend"})
    assert backup.status_code == 200 and "Archive: /var/lib/vz/dump/vzdump-lxc-" in backup.json()["output"]


async def test_security_groups_lifecycle(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    base = "/api/v1/px/security-groups"
    assert (await fresh_api.post(base, json={"group_name": "web", "description": "web tier"})).status_code == 200
    assert (await fresh_api.post(base, json={"group_name": "bad name"})).status_code == 400
    rule = {"protocol": "tcp", "destination_port": "80", "source_ip": "10.0.0.0/8"}
    assert (await fresh_api.post(f"{base}/web/rules", json=rule)).status_code == 200
    assert (await fresh_api.post(f"{base}/web/rules", json={"destination_port": 443})).status_code == 200
    assert (await fresh_api.post(f"{base}/web/rules", json={"source_ip": "10.0.0.0/8; reboot"})).status_code == 400
    assert (
        await fresh_api.post(f"{base}/web/rules", json={"protocol": "icmp", "destination_port": "1"})
    ).status_code == 400
    groups = (await fresh_api.get(base)).json()
    assert groups[0]["group"] == "web" and len(groups[0]["rules"]) == 2
    assert groups[0]["rules"][1] | {} == groups[0]["rules"][1] and groups[0]["rules"][1]["source"] == "10.0.0.0/8"
    inexact = await fresh_api.request("DELETE", f"{base}/web/rules", json={"destination_port": "80"})
    assert inexact.status_code == 400  # left-out fields must be unset in the rule
    exact = await fresh_api.request(
        "DELETE",
        f"{base}/web/rules",
        json={
            "direction": "in",
            "action": "ACCEPT",
            "protocol": "tcp",
            "destination_port": "80",
            "source_ip": "10.0.0.0/8",
        },
    )
    assert exact.status_code == 200 and len(fresh_sim.model.data["firewall"]["groups"]["web"]["rules"]) == 1
    for body in ({"destination_port": 8443}, {"protocol": "udp", "destination_port": "53", "action": "drop"}):
        assert (await fresh_api.post(f"{base}/web/rules", json=body)).status_code == 200
        same = await fresh_api.request("DELETE", f"{base}/web/rules", json=body)
        assert same.status_code == 200, (body, same.text)  # the body that created a rule deletes it
        assert len(fresh_sim.model.data["firewall"]["groups"]["web"]["rules"]) == 1
    warn = await fresh_api.post(f"{base}/attach", json={"group_name": "web", "vmid": vmid})
    assert warn.status_code == 200 and "firewall of CT" in warn.json()["output"]
    on = await fresh_api.post(f"{base}/attach", json={"group_name": "web", "vmid": vmid, "enable_firewall": True})
    assert on.status_code == 200
    ct = fresh_sim.model.containers[vmid]
    assert ct["firewall"]["options"]["enable"] == 1 and "firewall=1" in ct["config"]["net0"]
    assert [r["action"] for r in ct["firewall"]["rules"]] == ["web"]
    assert (await fresh_api.post(f"{base}/attach", json={"group_name": "nope", "vmid": vmid})).status_code == 404
    busy = await fresh_api.delete(f"{base}/web")
    assert busy.status_code == 400 and "force" in busy.json()["error"]
    assert (await fresh_api.post(f"{base}/detach", json={"group_name": "web", "vmid": vmid})).status_code == 200
    assert ct["firewall"]["rules"] == []
    forced = await fresh_api.delete(f"{base}/web", params={"force": "true"})
    assert forced.status_code == 200 and "web" not in fresh_sim.model.data["firewall"]["groups"]


COMPOSE = "services:\n  web:\n    image: nginx:1.27\n    ports: ['8080:80']\n  cache:\n    image: redis:7\n"


async def test_compose_application_flow(fresh_api, fresh_sim, tmp_path):
    vmid = await create_ct(fresh_api)
    base = f"/api/v1/lxc/instances/{vmid}/app"
    refused = await fresh_api.post(f"{base}/setup", json={})
    assert refused.status_code == 400 and "nesting" in refused.json()["error"]
    setup = await fresh_api.post(f"{base}/setup", json={"enable_nesting": True})
    assert setup.status_code == 200, setup.text
    ct = fresh_sim.model.containers[vmid]
    assert "nesting=1" in ct["config"]["features"] and "docker.io" in ct["packages"]
    assert "docker-compose" in ct["packages"]  # v2 package missing → fallback installed
    (tmp_path / "compose").mkdir()
    (tmp_path / "compose" / "web.yml").write_text(COMPOSE)
    deploy = await fresh_api.post(
        f"{base}/deploy", json={"action": "install", "compose_file": "web.yml", "auto_start": True}
    )
    assert deploy.status_code == 200, deploy.text
    assert ct["files"]["/opt/lws/apps/web/docker-compose.yml"] == COMPOSE
    assert "lws-web" in ct["services"]
    assert set(ct["docker"]["containers"]) == {"web-web-1", "web-cache-1"}
    assert not list(fresh_sim.model.host_path("/var/tmp").glob("lws-*"))  # staging file removed
    status = await fresh_api.post(f"{base}/deploy", json={"action": "status", "compose_file": "web.yml"})
    assert "web-web-1" in status.json()["output"]
    listing = await fresh_api.get(f"{base}/containers")
    assert "nginx:1.27" in listing.json()["output"]
    logs = await fresh_api.get(f"{base}/logs/web-web-1", params={"tail": "1"})
    assert logs.json() == {"output": "web | ready"}
    assert (await fresh_api.get(f"{base}/logs/web-web-1", params={"tail": "x"})).status_code == 400
    (tmp_path / "compose" / "web.yml").write_text(COMPOSE.replace("nginx:1.27", "nginx:1.28"))
    update = await fresh_api.post(f"{base}/update", json={"compose_file": "web.yml"})
    assert update.status_code == 200 and ct["docker"]["containers"]["web-web-1"]["image"] == "nginx:1.28"
    run = await fresh_api.post(f"{base}/run", json={"docker_command": ["-d", "--name", "tool", "busybox"]})
    assert run.status_code == 200 and "tool" in ct["docker"]["containers"]
    escape = await fresh_api.post(f"{base}/deploy", json={"compose_file": "../../../etc/passwd"})
    assert escape.status_code == 400
    url = await fresh_api.post(f"{base}/deploy", json={"compose_file": "https://127.0.0.1/x.yml"})
    assert url.status_code == 400 and "disabled" in url.json()["error"]
    down = await fresh_api.post(f"{base}/deploy", json={"action": "uninstall", "compose_file": "web.yml"})
    assert down.status_code == 200 and "web-web-1" not in ct["docker"]["containers"]
    removed = await fresh_api.post("/api/v1/lxc/instances/app/remove", json={"instance_ids": [vmid], "purge": True})
    assert removed.status_code == 200, removed.text
    assert "docker.io" not in ct["packages"] and ct["docker"]["containers"] == {}


async def test_app_remove_purges_running_containers_and_volumes_and_only_installed_packages(fresh_api, fresh_sim):
    used = await create_ct(fresh_api)
    bare = await create_ct(fresh_api)
    base = f"/api/v1/lxc/instances/{used}/app"
    assert (await fresh_api.post(f"{base}/setup", json={"enable_nesting": True})).status_code == 200
    for args in (["-d", "--name", "db", "-v", "dbdata:/var/lib/db", "postgres:16"], ["-d", "-v", "/cache", "redis:7"]):
        assert (await fresh_api.post(f"{base}/run", json={"docker_command": args})).status_code == 200
    ct = fresh_sim.model.containers[used]
    assert len(ct["docker"]["volumes"]) == 2 and all(
        c["status"] == "running" for c in ct["docker"]["containers"].values()
    )
    before = len(fresh_sim.commands())

    removed = await fresh_api.post(
        "/api/v1/lxc/instances/app/remove", json={"instance_ids": [used, bare], "purge": True}
    )
    assert removed.status_code == 200, removed.text
    results = removed.json()["results"]
    assert results[used]["error"] is None and "docker-compose" in results[used]["outcome"]
    assert results[bare] == {"outcome": "nothing installed", "status": None, "error": None}
    assert ct["docker"]["containers"] == {} and ct["docker"]["volumes"] == {} and ct["docker"]["images"] == []
    assert not {"docker.io", "docker-compose"} & set(ct["packages"]) and not ct.get("package_configs")
    sent = fresh_sim.commands()[before:]
    assert not any("apt-get" in c and "docker-compose-v2" in c for c in sent)  # never installed: not named to apt
    assert not any(f"pct exec {bare} -- env" in c or ("apt-get" in c and f" {bare} " in c) for c in sent)


async def test_app_remove_without_purge_keeps_conffiles_and_data(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    base = f"/api/v1/lxc/instances/{vmid}/app"
    assert (await fresh_api.post(f"{base}/setup", json={"enable_nesting": True})).status_code == 200
    assert (
        await fresh_api.post(f"{base}/run", json={"docker_command": ["-d", "-v", "keep:/d", "busybox"]})
    ).status_code == 200
    removed = await fresh_api.post("/api/v1/lxc/instances/app/remove", json={"instance_ids": [vmid]})
    assert removed.status_code == 200, removed.text
    ct = fresh_sim.model.containers[vmid]
    assert "docker.io" not in ct["packages"] and ct["package_configs"]["docker.io"] is True
    assert list(ct["docker"]["volumes"]) == ["keep"]  # without purge the data stays


async def test_compose_url_refuses_private_addresses(fresh_sim, tmp_path):
    from deployments.lxc.apps import load_compose
    from deployments.lxc.errors import BadRequest

    config = fresh_sim.config(tmp_path, compose_allow_urls=True)
    for url in (
        "https://127.0.0.1/a.yml",
        "https://10.0.0.1/a.yml",
        "http://example.com/a.yml",
        "https://user:pw@example.com/a.yml",
        "https://[::1]/a.yml",
        "file:///etc/passwd",
    ):
        try:
            await load_compose(config, url)
        except BadRequest:
            continue
        raise AssertionError(f"{url} was accepted")


async def test_cors_only_for_configured_origins(fresh_sim, tmp_path):
    from rayfleet.state import local_state
    from tests.deployments.lxc.simenv import make_client

    with local_state():
        for origins, expected in (([], None), (["https://ops.example"], "https://ops.example")):
            client, _app = make_client(fresh_sim.config(tmp_path, api={"allowed_origins": origins}))
            async with client:
                ok = await client.get("/api/v1/health", headers={"Origin": "https://ops.example"})
                evil = await client.get("/api/v1/health", headers={"Origin": "https://evil.example"})
            assert ok.headers.get("access-control-allow-origin") == expected
            assert "access-control-allow-origin" not in evil.headers


HOSTILE_PATHS = {
    "a NUL byte": "nightly/\x00backup.yaml",
    "a control character": "nightly/\x1bbackup.yaml",
    "a name over 255 bytes": "n" * 300 + ".yaml",
    "a path over 4096 bytes": "/".join(["d" * 200] * 25),
    "a path over 4096 bytes with the configured folder": "/".join(["d" * 200] * 20) + "/" + "e" * 90,
}


async def test_hostile_conf_backup_paths_get_400_and_write_nothing(api, tmp_path):
    before = sorted(p for p in (tmp_path / "conf-backups").rglob("*")) if (tmp_path / "conf-backups").exists() else []
    for what, path in HOSTILE_PATHS.items():
        response = await api.post("/api/v1/conf/backup", json={"destination_path": path})
        assert response.status_code == 400, (what, response.status_code, response.text)
        assert "destination_path" in response.json()["error"], what
        assert "\x00" not in response.text and "Errno" not in response.text, what
    after = sorted(p for p in (tmp_path / "conf-backups").rglob("*")) if (tmp_path / "conf-backups").exists() else []
    assert after == before


async def test_a_conf_backup_path_through_a_file_gets_400(api, tmp_path):
    (tmp_path / "conf-backups").mkdir(exist_ok=True)
    (tmp_path / "conf-backups" / "plain").write_text("a file, not a folder")
    response = await api.post("/api/v1/conf/backup", json={"destination_path": "plain/inside.yaml"})
    assert response.status_code == 400 and "cannot be written" in response.json()["error"]


async def test_hostile_upload_and_compose_paths_get_400(api):
    for what, path in HOSTILE_PATHS.items():
        upload = await api.post("/api/v1/px/upload", json={"local_path": path, "remote_template_name": "x.tar.gz"})
        assert upload.status_code == 400 and "local_path" in upload.json()["error"], (what, upload.text)
