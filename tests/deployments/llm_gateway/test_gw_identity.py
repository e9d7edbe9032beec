"""Identity (``identity.*``) and control-plane sessions, against a real OIDC issuer on loopback.

The issuer (``tests.doubles.oidc_issuer``) serves discovery, JWKS,
authorize and token endpoints over HTTP and signs with real RSA and P-256 keys; the gateway
is the real app served by uvicorn. Every request goes over a socket.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from pydantic import ValidationError

from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.oidc import OidcProvider, ProviderSettings
from deployments.llm_gateway.sessions import COOKIE, SessionSigner
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, CLIENT_ENV, INFER_KEY, base_config, identity_config
from tests.doubles.oidc_issuer import OidcIssuer, SigningKey

ENTRY = {"name": "idp-test", "base_url": "http://127.0.0.1:9/v1", "provider": "openai_compat", "priority": 0}


def cfg(tmp_path: Path, issuer: OidcIssuer, **identity: Any) -> dict[str, Any]:
    return base_config(tmp_path, {}, identity=identity_config(issuer, **identity))


def error(r: httpx.Response) -> tuple[int, str, str]:
    body = r.json()["error"]
    return r.status_code, body["code"], body["message"]


async def browser_sign_in(gw: Any, client: httpx.AsyncClient) -> httpx.Response:
    """Follow the code flow like a browser: gateway → issuer → gateway callback."""
    login = await client.get("/auth/oidc/local/login")
    assert login.status_code == 302
    at_issuer = await client.get(login.headers["location"])
    assert at_issuer.status_code == 302
    return await client.get(at_issuer.headers["location"])


async def test_code_flow_with_pkce_sets_a_strict_cookie_and_gates_changes_with_csrf(serve, issuer, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, issuer))
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as browser:
        login = await browser.get("/auth/oidc/local/login")
        target = urlsplit(login.headers["location"])
        q = {k: v[0] for k, v in parse_qs(target.query).items()}
        assert f"{target.scheme}://{target.netloc}{target.path}" == issuer.url + "/authorize"
        assert q["code_challenge_method"] == "S256" and q["state"] and q["nonce"] and q["client_id"] == issuer.client_id
        assert q["redirect_uri"] == gw.url + "/auth/oidc/local/callback"
        flow_cookie = login.headers["set-cookie"].lower()
        assert "httponly" in flow_cookie and "samesite=lax" in flow_cookie and "path=/auth/oidc/" in flow_cookie

        back = await browser.get(login.headers["location"])
        done = await browser.get(back.headers["location"])
        assert done.status_code == 303 and done.headers["location"] == "/ui/registry"
        cookies = done.headers.get_list("set-cookie")
        session_cookie = next(c for c in cookies if c.startswith(COOKIE + "="))
        low = session_cookie.lower()
        assert "httponly" in low and "samesite=strict" in low and "path=/" in low and "secure" not in low
        assert "max-age=600" in low
        sent = issuer.token_requests[-1]
        assert sent["grant_type"] == "authorization_code" and len(sent["code_verifier"]) >= 43
        assert sent["client_secret"] == "s3cret-client"

        me = (await browser.get("/auth/session")).json()
        assert me["role"] == "admin" and me["subject"] == "oidc:local:u-1"
        assert (await browser.get("/api/v1/registry")).status_code == 200
        r = await browser.post("/api/v1/registry", json=ENTRY)
        assert error(r)[:2] == (403, "csrf_failed")
        r = await browser.post("/api/v1/registry", json=ENTRY, headers={"X-CSRF-Token": "x" * 43})
        assert error(r)[:2] == (403, "csrf_failed")
        r = await browser.post("/api/v1/registry", json=ENTRY, headers={"X-CSRF-Token": me["csrf_token"]})
        assert r.status_code == 201
        assert (await gw.gateway.handles.registry.get.remote("idp-test"))["ok"]


async def test_logout_revokes_the_session_on_every_replica(serve, issuer, tmp_path, auth_env):
    gw1 = await serve(cfg(tmp_path, issuer))
    gw2 = await serve(cfg(tmp_path, issuer))  # same data_dir (session key) and the same SessionBoard
    async with httpx.AsyncClient(base_url=gw1.url, trust_env=False) as browser:
        await browser_sign_in(gw1, browser)
        token = browser.cookies[COOKIE]
        csrf = (await browser.get("/auth/session")).json()["csrf_token"]
        async with httpx.AsyncClient(base_url=gw2.url, trust_env=False, cookies={COOKIE: token}) as other:
            assert (await other.get("/api/v1/registry")).status_code == 200
            assert error(await browser.post("/auth/logout"))[:2] == (403, "csrf_failed")
            out = await browser.post("/auth/logout", headers={"X-CSRF-Token": csrf})
            assert out.json() == {"signed_out": True, "revoked": True}
            cleared = out.headers["set-cookie"].lower()
            assert cleared.startswith(COOKIE + '=""') and "max-age=0" in cleared and "httponly" in cleared
            r = await other.get("/api/v1/registry")
            assert error(r) == (401, "invalid_session", "Invalid session: signed out")
        assert COOKIE not in browser.cookies
        assert (await browser.get("/api/v1/registry")).status_code == 401


async def test_programmatic_sign_in_and_roles(serve, issuer, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, issuer))
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as c:

        async def session_for(email: str, **claims: Any) -> str:
            token = issuer.mint(email=email, sub=email, **claims)
            r = await c.post("/auth/token", json={"provider": "local", "id_token": token})
            assert r.status_code == 200, r.text
            assert r.json()["token_type"] == "session" and r.json()["expires_in"] == 600
            return r.json()["token"]

        admin = {"Authorization": "Bearer " + await session_for("ADA@example.test", email_verified=True)}
        assert (await c.get("/admin/panic", headers=admin)).status_code == 200
        assert (await c.post("/api/v1/registry", json=ENTRY, headers=admin)).status_code == 201  # no CSRF: not a cookie

        viewer = {"Authorization": "Bearer " + await session_for("vic@example.test")}
        assert (await c.get("/api/v1/registry", headers=viewer)).status_code == 200
        assert (await c.get("/metrics", headers=viewer)).status_code == 200
        r = await c.post("/api/v1/registry/idp-test/toggle", headers=viewer)
        assert error(r)[:2] == (403, "insufficient_role")
        assert error(await c.delete("/admin/panic", headers=viewer))[:2] == (403, "insufficient_role")

        user = {"Authorization": "Bearer " + await session_for("someone@example.test")}
        me = (await c.get("/auth/session", headers=user)).json()
        assert me["role"] == "user" and "csrf_token" in me
        assert error(await c.get("/api/v1/registry", headers=user))[:2] == (403, "insufficient_role")

        # sessions are for the control plane only; the inference routes still want an inference key
        assert (await c.get("/v1/models", headers=admin)).status_code == 401
        # the admin key works as before, and next to sessions
        assert (await c.get("/api/v1/registry", headers={"Authorization": f"Bearer {ADMIN_KEY}"})).status_code == 200
        # a session logged out through its bearer token is refused afterwards
        assert (await c.post("/auth/logout", headers=admin)).json()["revoked"] is True
        assert error(await c.get("/api/v1/registry", headers=admin))[:2] == (401, "invalid_session")


async def test_es256_tokens_are_accepted(serve, issuer, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, issuer))
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as c:
        token = issuer.mint(issuer.key("ec-1"), email="ada@example.test")
        r = await c.post("/auth/token", json={"provider": "local", "id_token": token})
    assert r.status_code == 200 and r.json()["role"] == "admin"


def _hs256_with_public_key(issuer: OidcIssuer) -> str:
    """The classic key-confusion forgery: HS256 keyed with the issuer's public RSA key."""
    import base64
    import hashlib
    import hmac
    import json

    from cryptography.hazmat.primitives import serialization

    pem = (
        issuer.key("rsa-1")
        .private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    now = int(time.time())
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
    body = b64(
        json.dumps({"iss": issuer.url, "aud": issuer.client_id, "sub": "x", "iat": now, "exp": now + 60}).encode()
    )
    mac = hmac.new(pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64(mac)}"


FAILURES = {
    "bad signature": (
        lambda i: i.mint(SigningKey.rsa("rsa-1")),
        (401, "invalid_id_token", "ID token refused: bad signature"),
    ),
    "expired": (
        lambda i: i.mint(iat=int(time.time()) - 7200, exp=int(time.time()) - 3600),
        (401, "invalid_id_token", "ID token refused: expired"),
    ),
    "not valid yet": (
        lambda i: i.mint(nbf=int(time.time()) + 3600),
        (401, "invalid_id_token", "ID token refused: not valid yet (nbf/iat in the future)"),
    ),
    "wrong audience": (
        lambda i: i.mint(aud="another-client"),
        (401, "invalid_id_token", "ID token refused: wrong audience"),
    ),
    "wrong issuer": (
        lambda i: i.mint(iss="http://127.0.0.1:1/evil"),
        (401, "invalid_id_token", "ID token refused: wrong issuer"),
    ),
    "unknown kid": (
        lambda i: i.mint(SigningKey.rsa("never-published")),
        (401, "invalid_id_token", "ID token refused: signing key 'never-published' is not published by the issuer"),
    ),
    "missing exp": (
        lambda i: i.mint(exp=None),
        (401, "invalid_id_token", "ID token refused: missing claim 'exp'"),
    ),
    "alg none": (
        lambda i: jwt.encode({"iss": i.url, "aud": i.client_id, "sub": "x"}, None, algorithm="none"),
        (401, "invalid_id_token", "ID token refused: algorithm 'none' is not accepted (RS256, ES256)"),
    ),
    "HS256 with the public key": (
        _hs256_with_public_key,
        (401, "invalid_id_token", "ID token refused: algorithm 'HS256' is not accepted (RS256, ES256)"),
    ),
    "ES256 header on an RSA key": (
        lambda i: jwt.encode(
            {"iss": i.url, "aud": i.client_id, "sub": "x", "iat": int(time.time()), "exp": int(time.time()) + 60},
            i.key("ec-1").private,
            algorithm="ES256",
            headers={"kid": "rsa-1"},
        ),
        (401, "invalid_id_token", "ID token refused: algorithm 'ES256' does not match the key 'rsa-1'"),
    ),
    "email not verified": (
        lambda i: i.mint(email="ada@example.test", email_verified=False),
        (401, "invalid_id_token", "ID token refused: the email address is not verified"),
    ),
    "not a JWT": (lambda i: "not-a-token", (401, "invalid_id_token", "ID token refused: not a JWT")),
    "several audiences without azp": (
        lambda i: i.mint(aud=[i.client_id, "another-client"]),
        (401, "invalid_id_token", "ID token refused: several audiences and azp is not the client id"),
    ),
}


@pytest.mark.parametrize("case", list(FAILURES))
async def test_id_token_failures(serve, issuer, tmp_path, auth_env, case):
    gw = await serve(cfg(tmp_path, issuer))
    make, expected = FAILURES[case]
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as c:
        r = await c.post("/auth/token", json={"provider": "local", "id_token": make(issuer)})
    assert error(r) == expected
    assert "s3cret" not in r.text


async def test_unknown_provider_identity_disabled_and_bad_bodies(serve, issuer, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, issuer))
    off = await serve(base_config(tmp_path / "off", {}))
    token = issuer.mint(email="ada@example.test")
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as c:
        r = await c.post("/auth/token", json={"provider": "nope", "id_token": token})
        assert error(r) == (400, "unknown_provider", "unknown identity provider 'nope'")
        assert error(await c.get("/auth/oidc/nope/login"))[:2] == (400, "unknown_provider")
        assert error(await c.post("/auth/token", json={"provider": "local"}))[:2] == (422, "validation_error")
        assert error(await c.post("/auth/token", content=b"[1]"))[:2] == (400, "invalid_json")
    async with httpx.AsyncClient(base_url=off.url, trust_env=False) as c:
        r = await c.post("/auth/token", json={"provider": "local", "id_token": token})
        assert error(r) == (400, "identity_disabled", "identity sign-in is disabled (identity.enabled is false)")
        assert error(await c.get("/auth/oidc/local/login"))[:2] == (400, "identity_disabled")
        assert (await c.get("/auth/providers")).json() == {"enabled": False, "providers": []}


async def test_callback_refuses_bad_state(serve, issuer, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, issuer))
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as browser:
        # no login step at all: no flow cookie
        r = await browser.get("/auth/oidc/local/callback", params={"code": "x", "state": "y"})
        assert error(r) == (400, "invalid_state", "sign-in state is missing, expired or does not match")
        login = await browser.get("/auth/oidc/local/login")
        back = await issuer_redirect(browser, login)
        q = {k: v[0] for k, v in parse_qs(urlsplit(back).query).items()}
        # a state from another flow (an attacker's link) is refused and no session is made
        r = await browser.get("/auth/oidc/local/callback", params={"code": q["code"], "state": "forged"})
        assert error(r)[:2] == (400, "invalid_state") and COOKIE not in browser.cookies
        # the flow cookie is bound to its provider
        r = await browser.get("/auth/oidc/other/callback", params={"code": q["code"], "state": q["state"]})
        assert error(r)[:2] == (400, "unknown_provider")
        # a refused sign-in at the provider
        r = await browser.get("/auth/oidc/local/callback", params={"error": "access_denied", "state": q["state"]})
        assert error(r) == (401, "sign_in_refused", "the provider refused the sign-in (access_denied)")
        # the genuine callback still works, once: the code cannot be replayed
        assert (await browser.get(back)).status_code == 303
        browser.cookies.delete(COOKIE)
        login = await browser.get("/auth/oidc/local/login")
        r = await browser.get("/auth/oidc/local/callback", params={"code": q["code"], "state": parse_state(login)})
        assert error(r)[:2] == (401, "code_exchange_failed")


def parse_state(login: httpx.Response) -> str:
    return parse_qs(urlsplit(login.headers["location"]).query)["state"][0]


async def issuer_redirect(client: httpx.AsyncClient, login: httpx.Response) -> str:
    return (await client.get(login.headers["location"])).headers["location"]


async def test_nonce_is_checked_and_jwks_is_cached_and_refetched_at_a_bounded_rate(issuer):
    now = [1000.0]
    provider = OidcProvider(
        ProviderSettings("local", issuer.url, issuer.client_id), min_refetch=30.0, clock=lambda: now[0]
    )
    claims = await provider.verify(issuer.mint(nonce="n-1"), nonce="n-1")
    assert claims["sub"] == "u-1"
    with pytest.raises(GatewayError, match="nonce mismatch"):
        await provider.verify(issuer.mint(nonce="n-1"), nonce="n-2")
    await provider.verify(issuer.mint(issuer.key("ec-1")))
    assert issuer.jwks_hits == 1  # one fetch, then the cache
    rotated = SigningKey.rsa("rsa-2")
    issuer.keys.append(rotated)
    for _ in range(5):  # an unknown kid within the bound: no new fetch
        with pytest.raises(GatewayError, match="not published"):
            await provider.verify(issuer.mint(rotated))
    assert issuer.jwks_hits == 1
    now[0] += 31
    assert (await provider.verify(issuer.mint(rotated)))["sub"] == "u-1"  # refetched: the rotation is picked up
    assert issuer.jwks_hits == 2
    with pytest.raises(GatewayError, match="not published"):
        await provider.verify(issuer.mint(SigningKey.rsa("rsa-9")))
    assert issuer.jwks_hits == 2


async def test_unreachable_or_lying_provider_is_502(serve, issuer, tmp_path, auth_env):
    from tests.conftest import free_port

    provider = OidcProvider(ProviderSettings("gone", f"http://127.0.0.1:{free_port()}", "c"))
    with pytest.raises(GatewayError) as exc:
        await provider.verify(issuer.mint())
    assert exc.value.status == 502 and exc.value.code == "identity_provider_unavailable"
    liar = OidcProvider(ProviderSettings("liar", issuer.url + "/other", "c"))
    with pytest.raises(GatewayError, match="not a JSON object|another issuer|HTTP 404"):
        await liar.verify(issuer.mint())


async def test_admin_key_sign_in(serve, issuer, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, issuer))
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as c:
        wrong = await c.post("/auth/key", json={"admin_key": "wrong"})
        assert error(wrong) == (401, "invalid_api_key", "Invalid admin key")
        inference = await c.post("/auth/key", json={"admin_key": INFER_KEY})
        assert (inference.status_code, inference.content) == (wrong.status_code, wrong.content)  # no key oracle
        assert COOKIE not in c.cookies
        r = await c.post("/auth/key", json={"admin_key": ADMIN_KEY})
        assert r.status_code == 200 and r.json()["role"] == "admin" and ADMIN_KEY not in r.text
        assert r.json()["subject"].startswith("key:") and r.json()["csrf_token"]
        assert (await c.get("/admin/plugins")).status_code == 200
        # a cookie that was tampered with is refused
        c.cookies.set(COOKIE, c.cookies[COOKIE][:-2] + "AA")
        assert error(await c.get("/admin/plugins"))[:2] == (401, "invalid_session")


async def test_key_sign_in_attempts_are_rate_limited_across_replicas(serve, issuer, tmp_path, auth_env):
    """Guessing keys through /auth/key costs attempts: a client address gets
    ``identity.key_sign_in_per_minute`` of them on all replicas together, then 429 with Retry-After."""
    config = base_config(tmp_path, {}, identity={**identity_config(issuer), "key_sign_in_per_minute": 3})
    gw1, gw2 = await serve(config), await serve(config)
    async with httpx.AsyncClient(base_url=gw1.url, trust_env=False) as c1:
        async with httpx.AsyncClient(base_url=gw2.url, trust_env=False) as c2:
            assert (await c1.post("/auth/key", json={"admin_key": ADMIN_KEY})).status_code == 200  # not counted
            assert [
                (await c.post("/auth/key", json={"admin_key": f"guess-{i}"})).status_code
                for i, c in enumerate((c1, c2, c1))
            ] == [401, 401, 401]
            limited = await c2.post("/auth/key", json={"admin_key": INFER_KEY})
            assert error(limited)[:2] == (429, "sign_in_rate_limited") and int(limited.headers["retry-after"]) >= 1
            refused = await c1.post("/auth/key", json={"admin_key": ADMIN_KEY})
            assert refused.status_code == 429 and "set-cookie" not in refused.headers  # even the right key


def test_session_tokens_expire_and_the_key_file_is_private(tmp_path, monkeypatch):
    monkeypatch.delenv("LLM_PROXY_SESSION_KEY", raising=False)
    now = [1_000_000.0]
    key_file = tmp_path / "session.key"
    signer = SessionSigner.from_env(key_file)
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    clocked = SessionSigner(key_file.read_bytes(), clock=lambda: now[0])
    token, session = clocked.issue("s", "admin", 60)
    assert signer.verify(token) is None  # issued "in the past": expired for the real clock
    assert clocked.verify(token) == session
    now[0] += 61
    assert clocked.verify(token) is None
    assert SessionSigner.from_env(key_file).verify(signer.issue("s", "admin", 60)[0]) is not None  # same file
    monkeypatch.setenv("LLM_PROXY_SESSION_KEY", "from the environment")
    from_env = SessionSigner.from_env(key_file)
    assert from_env.verify(signer.issue("s", "admin", 60)[0]) is None  # another key
    flow = from_env.seal("oidc-flow", {"sub": "s", "sid": "x", "role": "admin"}, 60)
    assert from_env.verify(flow) is None  # a flow cookie is never a session


@pytest.mark.parametrize(
    ("identity", "message"),
    [
        ({"enabled": True}, "needs at least one entry"),
        ({"enabled": True, "providers": [{"name": "a", "client_id_env": "X"}]}, "issuer and client_id_env"),
        ({"providers": [{"name": "a"}, {"name": "a"}]}, "names must be unique"),
        ({"providers": [{"name": "a", "issuer": "ftp://x"}]}, "issuer must be an http"),
        ({"providers": [{"name": "A b"}]}, "should match pattern"),
        ({"session_ttl": 5}, "greater than or equal to 60"),
    ],
)
def test_bad_identity_config_is_refused(identity, message):
    with pytest.raises(ValidationError, match=message):
        GatewayConfig.model_validate({"identity": identity})


async def test_missing_client_id_variable_stops_the_start(serve, issuer, tmp_path, auth_env, monkeypatch):
    monkeypatch.delenv(CLIENT_ENV)
    with pytest.raises(ValueError, match=f"\\${CLIENT_ENV} \\(the client id\\) is not set"):
        await serve(cfg(tmp_path, issuer))


async def test_the_cookie_is_secure_over_https_on_the_direct_listener(tmp_path, auth_env):
    import ssl

    from deployments.llm_gateway.app import create_app
    from rayfleet.direct import DirectServer, DirectSpec
    from tests.conftest import free_port
    from tests.rayfleet.test_direct import _cert

    cert, key = _cert(tmp_path)
    app = create_app(GatewayConfig.model_validate(base_config(tmp_path, {})))
    server = DirectServer(app, DirectSpec(port=free_port(), tls_cert=cert, tls_key=key))
    await server.start()
    try:
        async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=cert), trust_env=False) as c:
            r = await c.post(server.url + "/auth/key", json={"admin_key": ADMIN_KEY})
    finally:
        await server.stop()
    assert server.url.startswith("https://") and r.status_code == 200
    cookie = r.headers["set-cookie"].lower()
    assert "; secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie


async def test_sessions_fail_closed_when_the_session_board_is_unreachable(serve, tmp_path, auth_env):
    class Unreachable:
        def __getattr__(self, name: str) -> Any:
            class Method:
                async def remote(self, *args: Any) -> Any:
                    raise ConnectionError("actor gone")

            return Method()

    gw = await serve(base_config(tmp_path, {}), state={"sessions": Unreachable()})
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as c:
        token = (await c.post("/auth/key", json={"admin_key": ADMIN_KEY})).json()
        r = await c.get("/api/v1/registry")
        assert error(r) == (503, "session_store_unavailable", "sessions cannot be checked right now")
        assert error(await c.post("/auth/logout", headers={"X-CSRF-Token": token["csrf_token"]}))[:2] == (
            503,
            "session_store_unavailable",
        )
        assert token["role"] == "admin"
        # admin keys do not depend on the board
        assert (await c.get("/api/v1/registry", headers={"Authorization": f"Bearer {ADMIN_KEY}"})).status_code == 200
