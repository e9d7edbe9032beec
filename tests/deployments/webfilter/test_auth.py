"""Authentication (spec §5, §7, §8): Basic or JWT bearer, single-use refresh rotation, logout revokes,
password strength, lockout per client IP (socket peer; X-Forwarded-For is not trusted)."""

from __future__ import annotations

import base64

import httpx
import pytest

from tests.deployments.webfilter.conftest import ADMIN_PASSWORD

pytestmark = pytest.mark.realserver


def client_from(wf, ip: str, **kwargs) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(wf.app, client=(ip, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://webfilter", **kwargs)


async def login(client: httpx.AsyncClient, password: str = ADMIN_PASSWORD) -> httpx.Response:
    return await client.post("/api/auth/login", json={"username": "admin", "password": password})


async def test_health_needs_no_authentication_and_every_response_has_the_api_version(wf):
    async with client_from(wf, "10.0.0.1") as c:
        for path in ("/health", "/api/health"):
            r = await c.get(path)
            assert r.status_code == 200 and r.json()["status"] == "healthy"
            assert r.headers["x-api-version"] == "1" and r.json()["version"]
        r = await c.get("/api/ip-blacklist")
        assert r.status_code == 401 and r.json() == {"status": "error", "detail": "authentication required"}
        assert r.headers["x-api-version"] == "1"


async def test_login_returns_a_flat_token_pair_usable_as_bearer(wf):
    async with client_from(wf, "10.0.0.2") as c:
        r = await login(c)
        body = r.json()
        assert r.status_code == 200 and body["status"] == "success" and body["token_type"] == "Bearer"
        assert {"access_token", "refresh_token"} <= set(body)
        ok = await c.get("/api/settings", headers={"Authorization": f"Bearer {body['access_token']}"})
        assert ok.status_code == 200
        refresh_as_access = await c.get("/api/settings", headers={"Authorization": f"Bearer {body['refresh_token']}"})
        assert refresh_as_access.status_code == 401


async def test_refresh_tokens_rotate_and_are_single_use(wf):
    async with client_from(wf, "10.0.0.3") as c:
        first = (await login(c)).json()
        r = await c.post("/api/auth/refresh", json={"refresh_token": first["refresh_token"]})
        assert r.status_code == 200
        second = r.json()
        assert second["refresh_token"] != first["refresh_token"]
        replay = await c.post("/api/auth/refresh", json={"refresh_token": first["refresh_token"]})
        assert replay.status_code == 401 and replay.json()["status"] == "error"


async def test_logout_revokes_the_token_used(wf):
    async with client_from(wf, "10.0.0.4") as c:
        tokens = (await login(c)).json()
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        r = await c.post("/api/logout", headers=bearer, json={"refresh_token": tokens["refresh_token"]})
        assert r.status_code == 200 and r.json()["revoked"] == ["access", "refresh"]
        assert (await c.get("/api/settings", headers=bearer)).status_code == 401
        again = await c.post("/api/auth/refresh", json={"refresh_token": tokens["refresh_token"]})
        assert again.status_code == 401


async def test_alg_none_and_forged_tokens_are_refused(wf):
    import jwt

    forged = jwt.encode(
        {"sub": "admin", "type": "access", "jti": "x", "iat": 1, "exp": 9999999999}, "a-guessed-secret-" + "x" * 32
    )
    unsigned = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').decode().rstrip("=") + ".e30."
    async with client_from(wf, "10.0.0.5") as c:
        for token in (forged, unsigned):
            assert (await c.get("/api/settings", headers={"Authorization": f"Bearer {token}"})).status_code == 401


async def test_five_failures_lock_the_client_ip_even_for_the_right_password(wf):
    async with client_from(wf, "10.0.0.6") as c:
        for _ in range(4):
            assert (await login(c, "wrong")).status_code == 401
        fifth = await login(c, "wrong")
        assert fifth.status_code == 429 and int(fifth.headers["retry-after"]) > 0
        right = await login(c)
        assert right.status_code == 429 and right.json()["status"] == "error"
        basic = await c.get("/api/settings", auth=("admin", ADMIN_PASSWORD))
        assert basic.status_code == 429
        # spoofing the address through X-Forwarded-For does not escape the lock
        spoof = await c.post(
            "/api/auth/login",
            json={"username": "admin", "password": ADMIN_PASSWORD},
            headers={"X-Forwarded-For": "203.0.113.9"},
        )
        assert spoof.status_code == 429
    async with client_from(wf, "10.0.0.7", auth=("admin", ADMIN_PASSWORD)) as other:
        limits = (await other.get("/api/security/rate-limits")).json()
        assert limits["meta"] == {"max_attempts": 5, "window_seconds": 300}
        assert any(e["ip"] == "10.0.0.6" for e in limits["data"])
        assert (await other.delete("/api/security/rate-limits/10.0.0.6")).status_code == 200
        assert (await other.delete("/api/security/rate-limits/10.0.0.6")).status_code == 404
        assert (await other.delete("/api/security/rate-limits/not-an-ip")).status_code == 400
    async with client_from(wf, "10.0.0.6") as c:
        assert (await login(c)).status_code == 200


async def test_malformed_basic_credentials_are_a_401_not_a_500(wf):
    async with client_from(wf, "10.0.0.8") as c:
        r = await c.get("/api/settings", headers={"Authorization": "Basic !!!not-base64"})
        assert r.status_code == 401 and r.json()["status"] == "error"


async def test_ws_token_is_flat_and_64_hex(wf):
    r = await wf.api.get("/api/ws-token")
    body = r.json()
    assert r.status_code == 200 and body["status"] == "success" and len(body["token"]) == 64
    int(body["token"], 16)
