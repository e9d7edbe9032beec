"""Robustness findings of the fuzzing campaign, each pinned: size caps, VM id range, 404/409 from the host, Allow."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployments.lxc import validate as v
from tests.deployments.lxc.simenv import create_ct

EXEC_ROUTES = ["/api/v1/px/exec", "/api/v1/lxc/instances/102/exec"]


# ------------------------------------------------------------------ exec: caps before parsing, linear split
@pytest.mark.parametrize("route", EXEC_ROUTES)
async def test_a_megabyte_command_is_413_before_anything_parses_it(fresh_api, fresh_sim, route):
    response = await fresh_api.post(route, json={"command": "echo " + "x" * 1_000_000})
    assert response.status_code == 413
    body = response.json()
    assert body["code"] == 413 and body["name"] == "Request Entity Too Large" and "65536" in body["description"]
    assert fresh_sim.commands() == []


async def test_a_chunked_body_over_the_cap_is_413(fresh_api, fresh_sim):
    async def chunks():
        for _ in range(100):
            yield b"x" * 1024

    response = await fresh_api.post("/api/v1/px/exec", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["code"] == 413
    assert fresh_sim.commands() == []


@pytest.mark.parametrize("route", [*EXEC_ROUTES, "/api/v1/lxc/instances/102/app/run"])
async def test_a_command_over_the_character_cap_is_400_and_never_split(fresh_api, fresh_sim, route, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("split attempted on an oversized command")

    monkeypatch.setattr(v, "split_words", refuse)
    field = "docker_command" if route.endswith("/app/run") else "command"
    response = await fresh_api.post(route, json={field: "echo " + "x" * v.EXEC_MAX_CHARS})
    assert response.status_code == 400
    assert response.json() == {"error": f"'{field}' is longer than {v.EXEC_MAX_CHARS} characters"}
    assert fresh_sim.commands() == []


async def test_too_many_words_is_400(fresh_api, fresh_sim):
    response = await fresh_api.post("/api/v1/px/exec", json={"command": ["echo"] * (v.EXEC_MAX_WORDS + 1)})
    assert response.status_code == 400 and "at most" in response.json()["error"]
    response = await fresh_api.post("/api/v1/px/exec", json={"command": "a " * (v.EXEC_MAX_WORDS + 1)})
    assert response.status_code == 400 and "at most" in response.json()["error"]
    assert fresh_sim.commands() == []


def test_shlex_is_not_used_on_requests(monkeypatch):
    monkeypatch.setattr(shlex, "split", lambda *a, **k: pytest.fail("shlex.split called"))
    assert v.exec_words('ls -l \'a b\' "c\\"d" e\\ f') == ["ls", "-l", "a b", 'c"d', "e f"]


def test_split_is_linear_in_practice():
    """The longest accepted word splits in one regex match per quoted or bare run (no per-character copying)."""
    word = "x" * (v.EXEC_MAX_CHARS - 5)
    assert v.split_words("echo " + word) == ["echo", word]
    quoted = "'" + "y" * (v.EXEC_MAX_CHARS - 2) + "'"
    assert v.split_words(quoted) == ["y" * (v.EXEC_MAX_CHARS - 2)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab '\"\\\t", max_size=24))
def test_split_agrees_with_shlex(text):
    try:
        expected = shlex.split(text)
    except ValueError:
        with pytest.raises(v.Invalid, match="cannot be split"):
            v.split_words(text)
        return
    assert v.split_words(text) == expected


# ------------------------------------------------------------------ VM ids 0-99 are not container ids
@pytest.mark.parametrize("vmid", ["0", "7", "99", "0099", "1000000000"])
@pytest.mark.parametrize("suffix", ["", "/info", "/report", "/snapshots", "/storage", "/resources"])
async def test_ids_outside_the_proxmox_range_are_400_without_ssh(fresh_api, fresh_sim, vmid, suffix):
    response = await fresh_api.get(f"/api/v1/lxc/instances/{vmid}{suffix}")
    assert response.status_code == 400
    assert response.json() == {"error": "'instance_id' must be a container id between 100 and 999999999"}
    assert fresh_sim.commands() == []


async def test_bulk_ids_outside_the_range_are_400_without_ssh(fresh_api, fresh_sim):
    response = await fresh_api.post("/api/v1/lxc/instances/start", json={"instance_ids": ["100", "42"]})
    assert response.status_code == 400 and "between 100 and 999999999" in response.json()["error"]
    response = await fresh_api.post("/api/v1/px/backup-lxc", json={"vmid": "5", "storage": "local"})
    assert response.status_code == 400 and "'vmid'" in response.json()["error"]
    assert fresh_sim.commands() == []


# ------------------------------------------------------------------ what does not exist is 404
async def test_unknown_container_is_404(fresh_api):
    for path in ("/api/v1/lxc/instances/999/info", "/api/v1/lxc/instances/999", "/api/v1/lxc/instances/999/report"):
        response = await fresh_api.get(path)
        assert response.status_code == 404, path
        body = response.json()
        assert body["error"] == "Not Found" and "999.conf' does not exist" in body["message"]


@pytest.mark.parametrize("action", ["start", "stop", "reboot", "terminate", "status"])
async def test_bulk_with_an_unknown_id_is_404_and_does_nothing(fresh_api, fresh_sim, action):
    vmid = await create_ct(fresh_api)
    before = fresh_sim.model.containers[vmid]["status"]
    response = await fresh_api.post(f"/api/v1/lxc/instances/{action}", json={"instance_ids": [vmid, "999"]})
    assert response.status_code == 404
    assert response.json()["message"].startswith("no container 999 on eu-south-1/az1")
    assert fresh_sim.model.containers[vmid]["status"] == before
    assert not any(
        c.startswith(("pct start", "pct shutdown", "pct reboot", "pct destroy")) for c in fresh_sim.commands()[-3:]
    )


async def test_unknown_template_and_security_group_are_404(fresh_api):
    response = await fresh_api.delete("/api/v1/px/image/0")
    assert response.status_code == 404 and "does not exist" in response.json()["message"]
    for method, path, body in (
        ("DELETE", "/api/v1/px/security-groups/nosuch", None),
        ("POST", "/api/v1/px/security-groups/nosuch/rules", {"direction": "in"}),
        ("DELETE", "/api/v1/px/security-groups/nosuch/rules", {"direction": "in"}),
        ("POST", "/api/v1/px/security-groups/attach", {"group_name": "nosuch", "vmid": "100"}),
    ):
        response = await fresh_api.request(method, path, json=body)
        assert response.status_code == 404, (method, path)
        assert response.json() == {"error": "Not Found", "message": "no such security group 'nosuch'"}


async def test_a_command_that_really_fails_stays_500(fresh_api):
    vmid = await create_ct(fresh_api)
    response = await fresh_api.post(f"/api/v1/lxc/instances/{vmid}/exec", json={"command": ["false"]})
    assert response.status_code == 500 and response.json()["error"] == "Command execution failed"


async def test_state_conflicts_are_409(fresh_api, fresh_sim):
    vmid = await create_ct(fresh_api)
    running = await fresh_api.post("/api/v1/lxc/instances/start", json={"instance_ids": [vmid]})
    assert running.status_code == 200 and running.json()["results"][vmid]["outcome"] == "already running"
    fresh_sim.model.containers[vmid]["lock"] = "backup"
    fresh_sim.model.save()
    response = await fresh_api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [vmid]})
    assert response.status_code == 409
    assert response.json() == {"code": 409, "name": "Conflict", "description": f"{vmid}: CT is locked (backup)"}


# ------------------------------------------------------------------ 405 names every method of the path
@pytest.mark.parametrize(
    "method, path, allow",
    [
        ("OPTIONS", "/api/v1/lxc/instances/scale", "POST"),
        ("GET", "/api/v1/lxc/instances/scale", "POST"),
        ("PUT", "/api/v1/lxc/instances", "GET, POST"),
        ("PATCH", "/api/v1/lxc/instances/100/snapshots", "GET, POST"),
        ("PUT", "/api/v1/px/security-groups/web/rules", "POST, DELETE"),
    ],
)
async def test_405_carries_the_right_allow_header(api, method, path, allow):
    response = await api.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    assert response.json()["code"] == 405


async def test_app_routes_before_the_runtime_is_installed_are_409(fresh_api):
    vmid = await create_ct(fresh_api)
    response = await fresh_api.get(f"/api/v1/lxc/instances/{vmid}/app/containers")
    assert response.status_code == 409
    assert 'Failed to exec "docker"' in response.json()["description"]
