"""Tier 3: the container management API through Serve at /lxc, with the demo pve-sim behind it."""

from __future__ import annotations

import csv
import re

import httpx
import pytest

from tests.conftest import DATA
from tests.e2e.conftest import needs_app

PREFIX = "/lxc"
TEMPLATE = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"


@pytest.fixture
def lxc(cluster, http: httpx.Client, cluster_secrets) -> httpx.Client:
    needs_app(cluster, "lxc")
    http.headers["X-API-Key"] = cluster_secrets["LXC_API_KEY"]
    return http


def _routes() -> list[tuple[str, str]]:
    with open(DATA / "routes.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t") if r and not r[0].startswith("#")]
    return [(m, p) for c, m, p in rows[1:] if c == "lxc"]


def test_every_route_is_served(lxc: httpx.Client) -> None:
    routes = _routes()
    assert len(routes) == 65
    for method, path in routes:
        concrete = (
            path.replace("{instance_id}", "100")
            .replace("{group_name}", "web")
            .replace("{snapshot_name}", "snap1")
            .replace("{template_name}", "t1")
            .replace("{container_name}", "c1")
        )
        r = lxc.request(method, PREFIX + concrete)
        not_routed = (
            r.status_code == 404
            and r.headers.get("content-type", "").startswith("application/json")
            and r.json().get("message", "").startswith("The requested URL")
        )
        assert not not_routed and r.status_code != 405, (method, path, r.status_code, r.text[:200])


def test_errors_and_auth_through_serve(lxc: httpx.Client, cluster_secrets) -> None:
    health = lxc.get(PREFIX + "/api/v1/health", headers={"X-API-Key": ""}).json()
    assert health["status"] == "ok" and all(c["state"] == "running" for c in health.get("children", []))
    denied = lxc.get(PREFIX + "/api/v1/lxc/instances", headers={"X-API-Key": "nope"})
    assert denied.status_code == 401 and denied.json()["code"] == 401
    bad = lxc.get(PREFIX + "/api/v1/lxc/instances/abc")
    assert bad.status_code == 400 and bad.json()["name"] == "Bad Request"
    missing = lxc.get(PREFIX + "/api/v1/nope")
    assert missing.status_code == 404 and set(missing.json()) == {"error", "message"}
    refused = lxc.post(PREFIX + "/api/v1/lxc/instances/100/exec", json={"command": "id; reboot"})
    assert refused.status_code == 400 and "forbidden" in refused.json()["error"]
    docs = lxc.get(PREFIX + "/api/v1/docs")
    assert docs.status_code == 200 and "/lxc/api/v1/openapi.json" in docs.text
    assert lxc.get(PREFIX + "/api/v1/openapi.json").json()["info"]["title"] == "Container management API"


def test_ui_is_served_under_the_prefix(lxc: httpx.Client) -> None:
    page = lxc.get(PREFIX + "/")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    script = re.search(r'<script src="([^"]+)"', page.text).group(1)
    assert script == "/lxc/static/app.js"
    assert "textContent" in lxc.get(script).text


def test_lifecycle_against_the_demo_host(lxc: httpx.Client) -> None:
    created = lxc.post(PREFIX + "/api/v1/lxc/instances", json={"image_id": TEMPLATE, "count": 2, "hostname": "e2e"})
    assert created.status_code == 200, created.text
    ids = created.json()["instance_ids"]
    assert len(ids) == 2 and ids[0] != ids[1]
    listing = lxc.get(PREFIX + "/api/v1/lxc/instances").json()
    assert {str(c["vmid"]) for c in listing} >= set(ids)
    assert lxc.post(PREFIX + "/api/v1/lxc/instances/stop", json={"instance_ids": ids}).status_code == 200
    assert lxc.post(PREFIX + "/api/v1/lxc/instances/start", json={"instance_ids": ids}).status_code == 200
    scaled = lxc.post(
        PREFIX + "/api/v1/lxc/instances/scale", json={"instance_ids": ids, "memory": 1024, "storage_size": "+2G"}
    )
    assert scaled.status_code == 200, scaled.text
    snap = lxc.post(PREFIX + f"/api/v1/lxc/instances/{ids[0]}/snapshots", json={"snapshot_name": "e2e1"})
    assert snap.status_code == 200
    backup = lxc.post(PREFIX + f"/api/v1/lxc/instances/{ids[0]}/backup", json={})
    assert backup.status_code == 200 and backup.json()["archive"].startswith("/var/lib/vz/dump/vzdump-lxc-")
    run = lxc.post(PREFIX + f"/api/v1/lxc/instances/{ids[0]}/exec", json={"command": "hostname"})
    assert run.json() == {"output": f"e2e-{ids[0]}"}
    gone = lxc.post(PREFIX + "/api/v1/lxc/instances/terminate", json={"instance_ids": ids})
    assert gone.status_code == 200, gone.text


def test_fuzzing_findings_through_serve(lxc: httpx.Client) -> None:
    """The denial-of-service body, VM ids 0-99, unknown objects and the 405 Allow header, through the proxy."""
    huge = lxc.post(PREFIX + "/api/v1/lxc/instances/102/exec", json={"command": "echo " + "x" * 1_000_000})
    assert huge.status_code == 413 and huge.json()["code"] == 413
    assert lxc.get(PREFIX + "/api/v1/health").json()["status"] == "ok"
    low = lxc.get(PREFIX + "/api/v1/lxc/instances/50/info")
    assert low.status_code == 400 and "between 100 and 999999999" in low.json()["error"]
    unknown = lxc.get(PREFIX + "/api/v1/lxc/instances/999/info")
    assert unknown.status_code == 404 and "does not exist" in unknown.json()["message"]
    bulk = lxc.post(PREFIX + "/api/v1/lxc/instances/stop", json={"instance_ids": ["999"]})
    assert bulk.status_code == 404
    image = lxc.delete(PREFIX + "/api/v1/px/image/0")
    assert image.status_code == 404
    group = lxc.delete(PREFIX + "/api/v1/px/security-groups/nosuchgroup")
    assert group.status_code == 404
    options = lxc.request("OPTIONS", PREFIX + "/api/v1/lxc/instances/scale")
    assert options.status_code == 405 and options.headers["allow"] == "POST"
