"""Virtual keys through the real app and the openai SDK: created, listed and revoked by admins,
stored hashed and durably, enforced on every replica (allowed models, expiry, revocation)."""

from __future__ import annotations

import hashlib
import sqlite3
import time

import openai
import pytest

from actors.llm_gateway import KeyBoard
from rayfleet import state
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, base_config, chat

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def cfg(tmp_path, up):
    return base_config(tmp_path, {"a": {"base_url": up.base_url, "models": ["m", "m2"]}}, model_aliases={"fast": "m"})


def code(r) -> str:
    return r.json()["error"]["code"]


async def test_a_key_is_made_used_limited_to_its_models_and_revoked_on_every_replica(serve, up1, tmp_path, auth_env):
    gw1, gw2 = await serve(cfg(tmp_path, up1)), await serve(cfg(tmp_path, up1))
    async with gw1.client(key=ADMIN_KEY) as admin, gw1.client() as inference:
        assert (await inference.get("/api/v1/keys")).status_code == 403  # inference keys cannot manage keys
        made = await admin.post("/api/v1/keys", json={"name": "ci", "models": ["m"], "team": "infra"})
        assert made.status_code == 201, made.text
        key = made.json()
        assert key["key"].startswith("sk-rf-") and "hash" not in key and key["revoked_at"] is None
        listed = (await admin.get("/api/v1/keys")).json()
        assert listed["total"] == 1 and "key" not in listed["data"][0] and "hash" not in listed["data"][0]
        assert key["key"] not in (await admin.get("/api/v1/keys")).text

    await gw2.gateway.views.keys.refresh()  # what replica 2's 1 s refresh does
    sdk = openai.AsyncOpenAI(base_url=gw2.url + "/v1", api_key=key["key"], max_retries=0)
    out = await sdk.chat.completions.create(model="fast", messages=[{"role": "user", "content": "hi"}])
    assert out.choices[0].message.content.startswith("[up1]")
    assert {m.id for m in (await sdk.models.list()).data} == {"m", "fast"}  # only what the key may use
    with pytest.raises(openai.NotFoundError):
        await sdk.models.retrieve("m2")
    with pytest.raises(openai.PermissionDeniedError) as refused:
        await sdk.chat.completions.create(model="m2", messages=[{"role": "user", "content": "hi"}])
    assert refused.value.body["code"] == "model_not_allowed"

    async with gw1.client(key=ADMIN_KEY) as admin, gw1.client(key=key["key"]) as holder:
        revoked = await admin.delete(f"/api/v1/keys/{key['id']}")
        assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
        r = await holder.post("/v1/chat/completions", json=chat("m"))
        assert r.status_code == 401 and code(r) == "invalid_api_key"  # the same answer as an unknown key
        assert (await admin.delete("/api/v1/keys/key_nope")).status_code == 404
    await gw2.gateway.views.keys.refresh()
    with pytest.raises(openai.AuthenticationError):
        await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])

    recorded = sqlite3.connect(tmp_path / "gateway.durable.sqlite3").execute("SELECT op FROM rayfleet_durable_records")
    text = "\n".join(r[0] for r in recorded)
    assert key["id"] in text and key["key"] not in text  # stored hashed


async def test_a_key_is_updated_and_rotated(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client(key=ADMIN_KEY) as admin:
        key = (await admin.post("/api/v1/keys", json={"name": "svc", "models": ["m"]})).json()
        async with gw.client(key=key["key"]) as holder:
            assert code(await holder.post("/v1/chat/completions", json=chat("m2"))) == "model_not_allowed"
            changed = await admin.patch(f"/api/v1/keys/{key['id']}", json={"models": ["m2"], "team": "ml"})
            assert changed.status_code == 200 and changed.json()["models"] == ["m2"] and changed.json()["name"] == "svc"
            assert (await holder.post("/v1/chat/completions", json=chat("m2"))).status_code == 200
            assert (await admin.patch(f"/api/v1/keys/{key['id']}", json={"name": None})).status_code == 422
            assert (await admin.patch(f"/api/v1/keys/{key['id']}", json={"models": "m"})).status_code == 422
            rotated = await admin.post(f"/api/v1/keys/{key['id']}/rotate")
            assert rotated.status_code == 200 and rotated.json()["key"] != key["key"]
            assert rotated.json()["id"] == key["id"] and rotated.json()["models"] == ["m2"]
            assert code(await holder.post("/v1/chat/completions", json=chat("m2"))) == "invalid_api_key"
        async with gw.client(key=rotated.json()["key"]) as holder:
            assert (await holder.post("/v1/chat/completions", json=chat("m2"))).status_code == 200
        await admin.delete(f"/api/v1/keys/{key['id']}")
        assert (await admin.patch(f"/api/v1/keys/{key['id']}", json={"team": "x"})).status_code == 404
        assert (await admin.post(f"/api/v1/keys/{key['id']}/rotate")).status_code == 404


async def test_a_keys_rpm_holds_across_replicas(serve, up1, tmp_path, auth_env):
    gw1, gw2 = await serve(cfg(tmp_path, up1)), await serve(cfg(tmp_path, up1))
    async with gw1.client(key=ADMIN_KEY) as admin:
        made = await admin.post("/api/v1/keys", json={"name": "slow", "rpm": 2})
        assert made.status_code == 201 and made.json()["rpm"] == 2
        assert (await admin.post("/api/v1/keys", json={"name": "bad", "rpm": 0})).status_code == 422
    secret = made.json()["key"]
    await gw2.gateway.views.keys.refresh()
    async with gw1.client(key=secret) as c1, gw2.client(key=secret) as c2:
        assert (await c1.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        assert (await c2.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        third = await c1.post("/v1/chat/completions", json=chat("m"))
    assert third.status_code == 429 and code(third) == "key_rate_limit_exceeded"
    assert int(third.headers["retry-after"]) >= 1
    async with gw1.client() as env_key:  # another key is not affected
        assert (await env_key.post("/v1/chat/completions", json=chat("m"))).status_code == 200


async def test_an_expired_key_is_refused(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    expired = {"id": "key_old", "hash": hashlib.sha256(b"sk-rf-old-key").hexdigest(), "prefix": "sk-rf-old"}
    record = {**expired, "name": "old", "models": [], "expires_at": time.time() - 1, "team": None, "metadata": {}}
    assert (await state.call(gw.gateway.handles.keys, KeyBoard.create, record))["ok"]
    await gw.gateway.views.keys.refresh()
    async with gw.client(key="sk-rf-old-key") as c:
        r = await c.post("/v1/chat/completions", json=chat("m"))
    assert r.status_code == 401 and code(r) == "key_expired"


@pytest.mark.parametrize(
    "body,where",
    [
        ({}, "name"),
        ({"name": "x", "expires_at": 1.0}, "expires_at"),
        ({"name": "x", "models": "m"}, "models"),
        ({"name": "x", "models": [""]}, "models"),
        ({"name": "x\r\ny"}, "name"),
        ({"name": "x", "owner": "me"}, "owner"),
    ],
)
async def test_bad_key_bodies_are_422_and_make_nothing(serve, up1, tmp_path, auth_env, body, where):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client(key=ADMIN_KEY) as admin:
        r = await admin.post("/api/v1/keys", json=body)
        assert r.status_code == 422 and code(r) == "validation_error" and r.json()["error"]["message"].startswith(where)
        assert (await admin.get("/api/v1/keys")).json()["total"] == 0


def test_keys_survive_a_restart_of_their_actor(tmp_path):
    store = {"type": "sqlite", "sqlite_path": str(tmp_path / "gw.db"), "dsn_env": "", "dsn": ""}
    board = KeyBoard(store)
    record = {
        "id": "key_1",
        "hash": "ab" * 32,
        "prefix": "sk-rf-x",
        "name": "a",
        "models": ["m"],
        "expires_at": None,
        "team": None,
        "metadata": {},
    }
    assert board.create(record)["ok"] and board.create(record)["error"] == "conflict"
    before = board.snapshot()
    board2 = KeyBoard(store)
    after = board2.snapshot(before["version"])
    assert after is not None and after["keys"] == before["keys"] and after["version"] > before["version"]
    assert board2.revoke("key_1")["key"]["revoked_at"] is not None
    assert KeyBoard(store).snapshot()["keys"][0]["revoked_at"] is not None


async def test_a_keys_own_aliases_name_models_it_may_use(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client(key=ADMIN_KEY) as admin:
        made = await admin.post("/api/v1/keys", json={"name": "a", "models": ["m"], "aliases": {"gpt-4o": "m"}})
        assert made.status_code == 201 and made.json()["aliases"] == {"gpt-4o": "m"}
        bad = await admin.post("/api/v1/keys", json={"name": "b", "aliases": {"x": ""}})
        assert bad.status_code == 422 and bad.json()["error"]["message"].startswith("aliases")
    sdk = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key=made.json()["key"], max_retries=0)
    out = await sdk.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert out.model == "m" and up1.requests()[-1]["body"]["model"] == "m"
    listed = {m.id: getattr(m, "alias_of", None) for m in (await sdk.models.list()).data}
    assert listed == {"m": None, "fast": "m", "gpt-4o": "m"}
    async with gw.client(key=ADMIN_KEY) as admin:
        await admin.patch(f"/api/v1/keys/{made.json()['id']}", json={"aliases": {"gpt-4o": "m2"}})
    with pytest.raises(openai.PermissionDeniedError):  # an alias never opens a model the key may not use
        await sdk.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
