"""The demo host of `make up`: started once, reachable with the generated keys, stopped by pid."""

from __future__ import annotations

import asyncssh

from sims.pve.demo import ensure_demo_host, stop_demo_host
from tests.conftest import free_port


async def test_ensure_demo_host_is_idempotent(tmp_path, monkeypatch):
    monkeypatch.setenv("LXC_SIM_PORT", str(free_port()))
    monkeypatch.setenv("LXC_SIM_DIR", "unset")  # restored after the test; ensure_demo_host overwrites it
    first = ensure_demo_host(tmp_path)
    try:
        assert first["started"] is True and first["pid"]
        second = ensure_demo_host(tmp_path)
        assert second["started"] is False and second["pid"] == first["pid"] and second["port"] == first["port"]
        async with asyncssh.connect(
            first["host"],
            first["port"],
            username=first["user"],
            client_keys=[first["key_file"]],
            known_hosts=first["known_hosts"],
        ) as conn:
            result = await conn.run("pveam list local")
        assert result.exit_status == 0 and "debian-12-standard" in result.stdout
        import os

        assert os.environ["LXC_SIM_DIR"] == str((tmp_path / "lxc-sim").resolve())
    finally:
        assert stop_demo_host(tmp_path) is True


async def test_a_killed_demo_host_is_restarted_and_the_api_lists_containers_again(tmp_path, monkeypatch):
    """`rayfleet up` supervises the demo pve-sim: kill -9 it, the supervisor starts it again on the
    same port and model, and the container API's health body and /metrics count the restart."""
    import os
    import signal

    from rayfleet.state import local_state
    from sims.pve.demo import published_children
    from tests.deployments.lxc.simenv import make_client
    from tests.polling import eventually

    monkeypatch.setenv("LXC_SIM_PORT", str(free_port()))
    monkeypatch.setenv("LXC_SIM_DIR", "unset")
    info = ensure_demo_host(tmp_path)
    status_file = tmp_path / "lxc-sim" / "children.json"
    zone = {"host": "127.0.0.1", "port": info["port"], "key_file": info["key_file"], "known_hosts": info["known_hosts"]}
    try:
        with local_state():
            client, app = make_client(_demo_config(tmp_path, zone, status_file))
            async with client:
                listed = await client.get("/api/v1/lxc/instances")
                assert listed.status_code == 200, listed.text
                first = (await client.get("/api/v1/health")).json()["children"]
                assert [(c["name"], c["state"], c["restarts"]) for c in first] == [("pve-sim/lxc-sim", "running", 0)]

                os.kill(info["pid"], signal.SIGKILL)

                def restarted() -> bool:
                    children = published_children(status_file)
                    return bool(children) and children[0]["restarts"] == 1 and children[0]["state"] == "running"

                await eventually(restarted, timeout=30, what="the supervisor restarted pve-sim")
                again = await eventually(
                    lambda: _listing(client), timeout=30, what="the container listing answers again"
                )
                assert again.json() == listed.json()
                health = (await client.get("/api/v1/health")).json()["children"][0]
                assert health["pid"] not in (None, info["pid"]) and health["last_exit"] == -signal.SIGKILL
                metrics = (await client.get("/api/v1/metrics")).text
                assert 'rayfleet_child_restarts{child="pve-sim/lxc-sim"} 1.0' in metrics
                assert 'rayfleet_child_up{child="pve-sim/lxc-sim"} 1.0' in metrics
            await app.state.component.service.pool.close()
    finally:
        assert stop_demo_host(tmp_path) is True


async def _listing(client):
    response = await client.get("/api/v1/lxc/instances")
    return response if response.status_code == 200 else None


def _demo_config(tmp_path, zone, status_file):
    from deployments.lxc.config import LxcConfig
    from tests.deployments.lxc.simenv import API_KEY

    return LxcConfig.model_validate(
        {
            "api_key": API_KEY,
            "regions": {"eu-south-1": {"availability_zones": {"az1": zone}}},
            "instance_sizes": {"small": {"memory": 512, "cpulimit": 1, "storage": "local-lvm:8"}},
            "compose_dir": str(tmp_path / "compose"),
            "upload_dir": str(tmp_path / "uploads"),
            "conf_backup_dir": str(tmp_path / "conf-backups"),
            "download_dir": str(tmp_path / "downloads"),
            "audit_log": str(tmp_path / "audit.log"),
            "supervised_children": [str(status_file)],
        }
    )
