"""Every row of the spec's error table (§7), in the API's exact shapes."""

from __future__ import annotations

import pytest

from tests.deployments.lxc.simenv import API_KEY, create_ct

BULK = ["start", "stop", "status", "scale", "terminate", "reboot"]


async def test_command_failure_is_500_with_stderr_stdout_and_code(api):
    vmid = await create_ct(api)
    response = await api.post(f"/api/v1/lxc/instances/{vmid}/exec", json={"command": "cat /no/such/file"})
    assert response.status_code == 500
    body = response.json()
    assert set(body) == {"error", "details", "output", "return_code"}
    assert body["error"] == "Command execution failed"
    assert "No such file or directory" in body["details"]
    assert body["return_code"] == 1 and isinstance(body["output"], str)


async def test_handler_validation_is_400_error(api):
    response = await api.post("/api/v1/lxc/instances", json={"size": "small"})
    assert response.status_code == 400
    assert response.json() == {"error": "'image_id' is required"}
    response = await api.post("/api/v1/lxc/instances", json={"image_id": "local:vztmpl/x.tar.zst", "size": "huge"})
    assert response.status_code == 400 and "size" in response.json()["error"]
    response = await api.post("/api/v1/lxc/instances", json={"image_id": "local:vztmpl/x.tar.zst", "bogus": 1})
    assert response.status_code == 400 and set(response.json()) == {"error"}
    response = await api.post(
        "/api/v1/lxc/instances", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400 and set(response.json()) == {"error"}


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "wrong"}, {"X-API-Key": ""}])
async def test_missing_or_invalid_key_is_401_problem(api, headers):
    response = await api.get(
        "/api/v1/lxc/instances", headers={"X-API-Key": headers.get("X-API-Key", "")} if headers else None
    )
    if not headers:
        del api.headers["X-API-Key"]
        response = await api.get("/api/v1/lxc/instances")
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == 401 and body["name"] == "Unauthorized" and body["description"]


async def test_health_needs_no_key(api):
    del api.headers["X-API-Key"]
    response = await api.get("/api/v1/health")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/lxc/instances/abc",
        "/api/v1/lxc/instances/12a/snapshots",
        "/api/v1/lxc/instances/%D9%A1%D9%A2/info",
        "/api/v1/lxc/instances/-1/report",
    ],
)
async def test_non_numeric_instance_id_is_400_problem(api, path):
    response = await api.get(path)
    assert response.status_code == 400
    body = response.json()
    assert body == {"code": 400, "name": "Bad Request", "description": body["description"]}


@pytest.mark.parametrize("action", BULK)
async def test_non_numeric_bulk_element_rejects_whole_request(fresh_api, fresh_sim, action):
    before = len(fresh_sim.commands())
    body = {"instance_ids": ["100", "10x"]}
    if action == "scale":
        body["memory"] = 1024
    response = await fresh_api.post(f"/api/v1/lxc/instances/{action}", json=body)
    assert response.status_code == 400
    assert set(response.json()) == {"error"}
    assert len(fresh_sim.commands()) == before


async def test_non_numeric_element_app_remove(fresh_api, fresh_sim):
    response = await fresh_api.post("/api/v1/lxc/instances/app/remove", json={"instance_ids": ["1;reboot"]})
    assert response.status_code == 400 and set(response.json()) == {"error"}
    assert fresh_sim.commands() == []


async def test_unknown_route_is_404_error_message(api):
    response = await api.get("/api/v1/nothing/here")
    assert response.status_code == 404
    body = response.json()
    assert set(body) == {"error", "message"} and body["error"] == "Not Found"


async def test_unhandled_exception_is_500_error_message(api, monkeypatch):
    from deployments.lxc import containers

    async def boom(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(containers, "zone_view", boom)
    response = await api.get("/api/v1/lxc/instances")
    assert response.status_code == 500
    assert response.json() == {
        "error": "Internal Server Error",
        "message": "The server encountered an unexpected condition; see the server log.",
    }
    assert "secret internals" not in response.text


async def test_other_framework_exception_keeps_its_status(api):
    response = await api.put("/api/v1/lxc/instances")
    assert response.status_code == 405
    assert response.json() == {"code": 405, "name": "Method Not Allowed", "description": "Method Not Allowed"}
    assert response.headers["Allow"] == "GET, POST"  # every method served at the path, not only the first route's


async def test_restore_without_force_and_missing_required_fields(api):
    vmid = await create_ct(api)
    response = await api.post(f"/api/v1/lxc/instances/{vmid}/restore", json={"backup_file": "/var/lib/vz/dump/x.tar"})
    assert response.status_code == 400 and "force" in response.json()["error"]
    for body, field in (({"storage": "local"}, "vmid"), ({"vmid": vmid}, "storage")):
        response = await api.post("/api/v1/px/backup-lxc", json=body)
        assert response.status_code == 400 and field in response.json()["error"]
    for missing in ("volume_name", "volume_size", "mount_point"):
        body = {"volume_name": "local-lvm", "volume_size": "4G", "mount_point": "/data"}
        del body[missing]
        response = await api.post(f"/api/v1/lxc/instances/{vmid}/volumes/attach", json=body)
        assert response.status_code == 400 and missing in response.json()["error"]


async def test_disk_limits_refused_and_shrink_refused(api):
    vmid = await create_ct(api)
    response = await api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [vmid], "disk_read_limit": 10})
    assert response.status_code == 400 and "disk_read_limit" in response.json()["error"]
    response = await api.post("/api/v1/lxc/instances/scale", json={"instance_ids": [vmid], "storage_size": "4G"})
    assert response.status_code == 400 and "cannot shrink" in response.json()["error"]


@pytest.mark.parametrize("route", ["/api/v1/px/exec", "/api/v1/lxc/instances/100/exec"])
@pytest.mark.parametrize("command", ["ls; reboot", ["echo", "$(id)"], "a && b", "x | y", "`id`", "{a,b}", "a > /etc/x"])
async def test_exec_metacharacters_refused_before_any_ssh_traffic(fresh_api, fresh_sim, route, command):
    response = await fresh_api.post(route, json={"command": command})
    assert response.status_code == 400
    assert "forbidden characters" in response.json()["error"]
    assert fresh_sim.commands() == []


async def test_timeout_reports_124_and_is_not_retried(fresh_sim, tmp_path):
    from rayfleet.state import local_state
    from tests.deployments.lxc.simenv import make_client

    with local_state():
        client, app = make_client(fresh_sim.config(tmp_path, api={"command_timeout": 1}))
        async with client:
            response = await client.post("/api/v1/px/exec", json={"command": "sleep 5"})
        await app.state.component.service.pool.close()
    assert response.status_code == 500
    body = response.json()
    assert body["return_code"] == 124
    assert body["details"] == "Command execution timed out after 1 seconds."
    assert fresh_sim.commands() == ["timeout -k 5 1 sleep 5"]


async def test_key_never_echoed(api):
    response = await api.get("/api/v1/conf")
    assert response.status_code == 200
    assert API_KEY not in response.text and response.json()["api_key"] == "********"
