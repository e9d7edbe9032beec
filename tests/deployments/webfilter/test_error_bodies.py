"""No error body shows Ray's internals: an exception the proxy actor raises reaches a replica as Ray's
`RayTaskError(<class>)`, whose text is the remote traceback; answers carry a plain message in the
component's error shape, and the detail stays in the server log."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.deployments.webfilter.conftest import Origin, Service, require_dataplane, running_service, state_folder
from tests.doubles.ray_delivery import RayDeliveredHandle

pytestmark = pytest.mark.realserver

RAY_MARKS = ("ray::", "RayTaskError", "Traceback", 'File "', "pid=", "actor_id")


@pytest.fixture(scope="module")
async def wf_ray(origin: Origin) -> AsyncIterator[Service]:
    """A web filter whose replica reaches the proxy actor through a handle that delivers its errors as Ray does."""
    require_dataplane()
    async for service in running_service(state_folder(), origin):
        context = service.app.state.component
        local = context.proxy
        context.proxy = RayDeliveredHandle(local, "ProxyOwner")
        try:
            yield service
        finally:
            context.proxy = local


def assert_plain(body: dict, status: int) -> None:
    assert body["status"] == "error" and isinstance(body["detail"], str)
    assert "\n" not in body["detail"] and len(body["detail"]) <= 400, body["detail"]
    assert not any(mark in body["detail"] for mark in RAY_MARKS), body["detail"]
    if status >= 500:
        assert body["code"] == "internal_error"


async def test_a_setting_the_proxy_actor_refuses_answers_400_with_its_reason_only(wf_ray):
    r = await wf_ray.api.put("/api/settings/proxy_listen", json={"value": ["198.18.250.1:3128"]})
    assert r.status_code == 400
    assert_plain(r.json(), 400)
    assert "is not an address of this node" in r.json()["detail"]
    assert (await wf_ray.api.get("/api/settings")).json()["data"]["proxy_listen"] == []


async def test_a_backup_the_proxy_actor_refuses_answers_400_with_its_reason_only(wf_ray):
    backup = (await wf_ray.api.get("/api/maintenance/backup-config")).json()["data"]
    backup["settings"]["proxy_listen"] = ["198.18.250.1:3128"]
    r = await wf_ray.api.post("/api/maintenance/restore-config", json={"config": backup})
    assert r.status_code == 400
    assert_plain(r.json(), 400)
    assert "is not an address of this node" in r.json()["detail"]


async def test_the_cache_manager_unavailable_is_503_without_ray_internals(wf_ray, caplog):
    context = wf_ray.app.state.component
    await context.proxy._inner.stop.remote()
    r = await wf_ray.api.get("/api/cache/statistics")
    assert r.status_code == 503
    assert_plain(r.json(), 503)
    assert r.json()["detail"] == "squid cache manager unavailable: squid is not running"
    assert any("ray::ProxyOwner.manager" in record.getMessage() + str(record.__dict__) for record in caplog.records)


async def test_an_unexpected_actor_error_is_a_plain_500_and_the_detail_is_logged(wf_ray, caplog):
    context = wf_ray.app.state.component
    await wf_ray.api.post("/api/maintenance/reload-config")  # the previous test stopped the data plane
    acl = context.proxy._inner.instance.plane.root / "acl"
    shutil.rmtree(acl)
    acl.write_text("not a folder")  # the proxy actor's next render fails with an OSError of its own
    # as a server does: the response is sent, the exception is not re-raised into the client
    transport = httpx.ASGITransport(wf_ray.app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://webfilter", auth=wf_ray.api.auth) as api:
        r = await api.post("/api/domain-blacklist", json={"domain": "broken-disk.test"})
    assert r.status_code == 500
    assert r.json() == {"status": "error", "detail": "internal error", "code": "internal_error"}
    logged = [(record.exc_text or "") for record in caplog.records if record.getMessage() == "unhandled error"]
    assert any("ray::ProxyOwner.sync" in text and "NotADirectoryError" in text for text in logged)
