"""change-password: strength policy, current password required, old tokens refused afterwards.
Its own service, so the other modules keep the known password."""

from __future__ import annotations

import httpx
import pytest

from tests.deployments.webfilter.conftest import ADMIN_PASSWORD, require_dataplane, running_service, state_folder

pytestmark = pytest.mark.realserver


@pytest.fixture(scope="module")
async def svc(origin):
    require_dataplane()
    async for service in running_service(state_folder(), origin):
        yield service


@pytest.mark.parametrize(
    "new, reason",
    [
        ("short1!", "at least 10"),
        ("alllowercase-123", "upper-case"),
        ("NoDigitsHere!!", "digit"),
        ("NoSpecial12345", "special"),
        ("Admin-password-1", "user name"),
    ],
)
async def test_weak_passwords_are_refused_with_the_reason(svc, new, reason):
    r = await svc.api.post("/api/change-password", json={"current_password": ADMIN_PASSWORD, "new_password": new})
    assert r.status_code == 400 and reason in r.json()["detail"]


async def test_a_strong_password_replaces_the_old_one_and_old_tokens_die(svc):
    transport = httpx.ASGITransport(svc.app, client=("10.1.0.1", 1))
    async with httpx.AsyncClient(transport=transport, base_url="http://w") as c:
        old = (await c.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})).json()
        import asyncio

        await asyncio.sleep(1.1)  # token iat has one-second resolution
        r = await c.post(
            "/api/change-password",
            json={"current_password": ADMIN_PASSWORD, "new_password": "Brand-new-Secret-77"},
            auth=("admin", ADMIN_PASSWORD),
        )
        assert r.status_code == 200 and r.json()["status"] == "success"
        assert (await c.get("/api/settings", auth=("admin", ADMIN_PASSWORD))).status_code == 401
        assert (await c.get("/api/settings", auth=("admin", "Brand-new-Secret-77"))).status_code == 200
        stale = await c.get("/api/settings", headers={"Authorization": f"Bearer {old['access_token']}"})
        assert stale.status_code == 401
        score = (await c.get("/api/security/score", auth=("admin", "Brand-new-Secret-77"))).json()["data"]
        assert score["checks"]["password_changed"] is True
