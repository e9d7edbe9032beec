"""A virtual key's tpm and budgets, and spend per key, team, model and endpoint, through the real app
and the openai SDK: limits hold against parallel requests and concurrent streams, on every replica,
across actor restarts; a withdrawn key's stream stops; a key holder reads its own spend only."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import openai
import pytest

from rayfleet import state
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, Served, base_config, chat, flush
from tests.polling import eventually

PRICE = 0.001  # USD per token, in and out (the config's pricing for model "m")


def cfg(tmp_path, up, **overrides: Any) -> dict[str, Any]:
    return base_config(
        tmp_path,
        {"a": {"base_url": up.base_url, "models": ["m", "m2"]}},
        pricing={"m": {"input": PRICE * 1e6, "output": PRICE * 1e6}, "m2": {"input": 0.0, "output": 0.0}},
        **overrides,
    )


def code(r: httpx.Response) -> str:
    return r.json()["error"]["code"]


async def make_key(gw: Served, **fields: Any) -> dict[str, Any]:
    async with gw.client(key=ADMIN_KEY) as admin:
        made = await admin.post("/api/v1/keys", json={"name": "k", **fields})
    assert made.status_code == 201, made.text
    return made.json()


async def stream_text(client: httpx.AsyncClient, body: dict[str, Any]) -> tuple[int, str]:
    async with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as r:
        return r.status_code, (await r.aread()).decode()


def usage_of(sse: str) -> dict[str, Any]:
    """The usage of a stream's final usage chunk."""
    chunks = [json.loads(line[6:]) for line in sse.splitlines() if line.startswith("data: {")]
    return next(c["usage"] for c in reversed(chunks) if c.get("usage"))


async def test_key_fields_are_validated_and_shown(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    key = await make_key(gw, tpm=1000, budget_daily=1.5, budget_total=10, team="ml", metadata={"owner": "ada"})
    assert (key["tpm"], key["budget_daily"], key["budget_total"], key["team"]) == (1000, 1.5, 10, "ml")
    async with gw.client(key=ADMIN_KEY) as admin:
        for bad in ({"tpm": 0}, {"budget_daily": -1}, {"budget_total": 0}, {"budget_daily": "1e999"}):
            r = await admin.post("/api/v1/keys", json={"name": "x", **bad})
            assert r.status_code == 422 and code(r) == "validation_error", bad
        changed = await admin.patch(f"/api/v1/keys/{key['id']}", json={"budget_total": None, "tpm": 5})
        assert changed.status_code == 200 and changed.json()["budget_total"] is None and changed.json()["tpm"] == 5


async def test_parallel_requests_cannot_pass_the_keys_tpm_on_two_replicas(serve, up1, tmp_path, auth_env):
    """Each request takes its estimate (prompt + max_tokens) before it is forwarded, so a burst in
    parallel on two replicas is admitted only as far as the bucket goes; what the upstream reports
    as used is what stays taken."""
    up1.faults({"latency_ms": 300, "times": -1})
    gw1, gw2 = await serve(cfg(tmp_path, up1)), await serve(cfg(tmp_path, up1))
    key = await make_key(gw1, tpm=600)
    await gw2.gateway.views.keys.refresh()
    body = chat("m", max_tokens=200)  # estimate 3 + 200 tokens: two fit in 600, a third does not
    async with gw1.client(key=key["key"]) as c1, gw2.client(key=key["key"]) as c2:
        answers = await asyncio.gather(*(c.post("/v1/chat/completions", json=body) for c in [c1, c2] * 5))
        assert sorted(r.status_code for r in answers) == [200] * 2 + [429] * 8
        refused = next(r for r in answers if r.status_code == 429)
        assert code(refused) == "key_tpm_exceeded" and int(refused.headers["retry-after"]) >= 1
        used = sum(r.json()["usage"]["total_tokens"] for r in answers if r.status_code == 200)
        assert used < 40  # the double answered a few words: the estimates above that are given back
        sdk = openai.AsyncOpenAI(base_url=gw1.url + "/v1", api_key=key["key"], max_retries=0)
        out = await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=200)
        assert out.usage is not None and out.usage.total_tokens < 20
        with pytest.raises(openai.RateLimitError) as limited:
            await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=590)
    assert limited.value.body["code"] == "key_tpm_exceeded"


async def test_concurrent_streams_cannot_spend_past_the_keys_budget(serve, up1, tmp_path, auth_env):
    """Each stream reserves its worst case before it is forwarded and is charged from the upstream's
    final usage chunk: ten at once on a budget for four, then one after another until refused."""
    up1.faults({"chunk_delay_ms": 50, "times": -1})
    gw = await serve(cfg(tmp_path, up1))
    key = await make_key(gw, budget_total=0.5, team="ml")
    body = chat("m", max_tokens=100, stream_options={"include_usage": True})  # worst case (3 + 100) × $0.001
    async with gw.client(key=key["key"]) as c:
        answers = await asyncio.gather(*(stream_text(c, body) for _ in range(10)))
        assert sorted(status for status, _ in answers) == [200] * 4 + [402] * 6
        refusal = json.loads(next(text for status, text in answers if status == 402))
        assert refusal["error"]["code"] == "key_budget_exceeded" and refusal["error"]["type"] == "insufficient_quota"
        served = 4
        while (await stream_text(c, body))[0] == 200:
            served += 1
        await flush(gw)
        spent = (await c.get("/v1/spend")).json()
    per_stream = usage_of(next(text for status, text in answers if status == 200))["total_tokens"] * PRICE
    assert spent["key"]["spent_total"] == pytest.approx(served * per_stream)
    assert 0.5 - 0.103 < spent["key"]["spent_total"] <= 0.5
    assert spent["total_cost_usd"] == pytest.approx(served * per_stream) and spent["total_requests"] == served

    sdk = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key=key["key"], max_retries=0)
    with pytest.raises(openai.APIStatusError) as over:
        await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=100)
    assert over.value.status_code == 402 and over.value.body["code"] == "key_budget_exceeded"
    free = await sdk.chat.completions.create(model="m2", messages=[{"role": "user", "content": "hi"}])
    assert free.choices[0].message.content  # a free model costs nothing, so the key may still use it


async def test_a_daily_budget_refuses_once_used_up(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    key = await make_key(gw, budget_daily=0.03)
    async with gw.client(key=key["key"]) as c:
        statuses = [(await c.post("/v1/chat/completions", json=chat("m", max_tokens=5))).status_code for _ in range(6)]
    assert statuses[:2] == [200, 200] and statuses[-1] == 402  # each costs and reserves 8 × $0.001


async def test_a_keys_spend_survives_a_restart_of_its_actors(serve, up1, tmp_path, auth_env):
    config = cfg(tmp_path, up1)
    gw = await serve(config)
    key = await make_key(gw, budget_total=0.05)
    async with gw.client(key=key["key"]) as c:
        while (await c.post("/v1/chat/completions", json=chat("m", max_tokens=5))).status_code == 200:
            pass
        await flush(gw)
        before = (await c.get("/v1/spend")).json()["key"]["spent_total"]
    assert 0.05 - 0.008 < before <= 0.05
    state.reset_local_state()  # every actor is gone: a restart replays their records
    gw2 = await serve(config)
    async with gw2.client(key=key["key"]) as c:
        r = await c.post("/v1/chat/completions", json=chat("m", max_tokens=5))
        assert r.status_code == 402 and code(r) == "key_budget_exceeded"
        assert (await c.get("/v1/spend")).json()["key"]["spent_total"] == pytest.approx(before)


async def test_spend_is_grouped_by_key_team_model_and_endpoint_for_admins(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    ml, web = await make_key(gw, team="ml"), await make_key(gw, team="web")
    start = time.time()
    async with gw.client(key=ml["key"]) as a, gw.client(key=web["key"]) as b, gw.client() as env:
        for client, model in ((a, "m"), (a, "m"), (a, "m2"), (b, "m")):
            assert (await client.post("/v1/chat/completions", json=chat(model, max_tokens=5))).status_code == 200
        assert (await stream_text(b, chat("m", max_tokens=5)))[0] == 200
        assert (await env.post("/v1/chat/completions", json=chat("m", max_tokens=5))).status_code == 200
    await flush(gw)
    one = 8 * PRICE  # 3 prompt and 5 completion tokens
    async with gw.client(key=ADMIN_KEY) as admin:
        by_team = (await admin.get("/api/v1/spend", params={"group_by": "team"})).json()
        teams = {row["team"]: (row["requests"], row["cost_usd"]) for row in by_team["data"]}
        assert teams == {"ml": (3, pytest.approx(2 * one)), "web": (2, pytest.approx(2 * one)), None: (1, one)}
        by_key = (await admin.get("/api/v1/spend", params={"group_by": "key", "team": "ml"})).json()["data"]
        assert [(row["key"], row["requests"], row["total_tokens"]) for row in by_key] == [(ml["id"], 3, 24)]
        by_model = (await admin.get("/api/v1/spend", params={"group_by": "model"})).json()["data"]
        assert {row["model"]: row["requests"] for row in by_model} == {"m": 5, "m2": 1}
        by_endpoint = (await admin.get("/api/v1/spend?group_by=endpoint")).json()
        assert [row["endpoint"] for row in by_endpoint["data"]] == ["a"] and by_endpoint["total_requests"] == 6
        window = {"from": str(start - 1), "to": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + 3600))}
        assert (await admin.get("/api/v1/spend", params=window)).json()["total_requests"] == 6
        before = {"to": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start - 60))}
        assert (await admin.get("/api/v1/spend", params=before)).json()["data"] == []
        for bad in (
            {"group_by": "tenant"},
            {"from": "yesterday"},
            {"to": "1e999"},
            {"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"},
            {"group_by": "key", "limit": "5"},
            {"team": ""},
        ):
            r = await admin.get("/api/v1/spend", params=bad)
            assert r.status_code == 400 and code(r) == "invalid_parameter", bad
            assert r.json()["error"]["message"].split(":")[0] in bad


async def test_a_key_holder_reads_its_own_spend_and_no_other_teams(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    ml, web = await make_key(gw, team="ml", budget_daily=5.0), await make_key(gw, team="web")
    async with gw.client(key=ml["key"]) as a, gw.client(key=web["key"]) as b, gw.client() as env:
        assert (await a.post("/v1/chat/completions", json=chat("m", max_tokens=5))).status_code == 200
        assert (await b.post("/v1/chat/completions", json=chat("m", max_tokens=5))).status_code == 200
        await flush(gw)
        own = (await a.get("/v1/spend", params={"group_by": "team"})).json()
        assert [(row["team"], row["requests"]) for row in own["data"]] == [("ml", 1)]
        assert own["key"]["id"] == ml["id"] and own["key"]["budget_daily"] == 5.0
        assert own["key"]["spent_today"] == pytest.approx(8 * PRICE)
        for other in ({"team": "web"}, {"key_id": web["id"]}):
            r = await a.get("/v1/spend", params=other)
            assert r.status_code == 403 and code(r) == "spend_not_allowed"
        assert (await a.get("/api/v1/spend", params={"team": "web"})).status_code in (401, 403)
        r = await env.get("/v1/spend")
        assert r.status_code == 403 and code(r) == "virtual_key_required"
        assert (await env.get("/api/v1/spend")).status_code == 403  # an inference key is not an admin key


@pytest.mark.parametrize("withdraw", ["revoke", "rotate", "expire"])
async def test_a_withdrawn_keys_stream_stops_and_is_charged(serve, up1, tmp_path, auth_env, withdraw):
    up1.faults({"chunk_delay_ms": 400, "times": -1})
    gw = await serve(cfg(tmp_path, up1))
    fields = {"expires_at": time.time() + 1.5} if withdraw == "expire" else {}
    key = await make_key(gw, **fields)
    async with gw.client(key=key["key"]) as c, gw.client(key=ADMIN_KEY) as admin:
        async with c.stream("POST", "/v1/chat/completions", json=chat("m", stream=True)) as r:
            assert r.status_code == 200
            lines = r.aiter_lines()
            assert (await anext(lines)).startswith("data: ")  # the stream runs
            if withdraw == "revoke":
                assert (await admin.delete(f"/api/v1/keys/{key['id']}")).status_code == 200
            elif withdraw == "rotate":
                assert (await admin.post(f"/api/v1/keys/{key['id']}/rotate")).status_code == 200
            rest = [line async for line in lines]
        await flush(gw)
    events = [json.loads(line[6:]) for line in rest if line.startswith("data: {")]
    assert events[-1]["error"]["code"] == "invalid_api_key"
    words = sum(1 for e in events if e.get("choices") and e["choices"][0]["delta"].get("content"))
    assert words < 8  # cut before the reply's nine words were all sent
    async with gw.client(key=ADMIN_KEY) as admin:
        row = (await admin.get("/api/v1/spend", params={"key_id": key["id"]})).json()["data"][0]
    assert row["requests"] == 1 and row["cost_usd"] > 0  # what it used is charged


async def test_a_revoked_keys_cached_answer_is_not_served(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1, caching={"enabled": True}))
    key = await make_key(gw)
    body = chat("m", max_tokens=5, temperature=0)
    async with gw.client(key=key["key"]) as c, gw.client(key=ADMIN_KEY) as admin:
        assert (await c.post("/v1/chat/completions", json=body)).headers["x-cache"] == "MISS"
        await flush(gw)
        assert (await c.post("/v1/chat/completions", json=body)).headers["x-cache"] == "HIT"
        await admin.delete(f"/api/v1/keys/{key['id']}")
        r = await c.post("/v1/chat/completions", json=body)
    assert r.status_code == 401 and code(r) == "invalid_api_key"


async def test_a_budget_or_tpm_change_holds_on_every_replica(serve, up1, tmp_path, auth_env):
    """A replica holding a slice of the old budget gives it back when the budget changes, so a lowered
    budget refuses at once there and, after its 1 s refresh, on the other replica."""
    gw1, gw2 = await serve(cfg(tmp_path, up1)), await serve(cfg(tmp_path, up1))
    key = await make_key(gw1, budget_total=1.0)
    await gw2.gateway.views.keys.refresh()
    body = chat("m", max_tokens=5)
    async with gw1.client(key=key["key"]) as c1, gw2.client(key=key["key"]) as c2:
        for c in (c1, c2, c1):
            assert (await c.post("/v1/chat/completions", json=body)).status_code == 200
        async with gw1.client(key=ADMIN_KEY) as admin:
            await admin.patch(f"/api/v1/keys/{key['id']}", json={"budget_total": 0.03, "tpm": 100000})
        r = await c1.post("/v1/chat/completions", json=body)  # 3 × $0.008 spent, $0.008 more needed
        assert r.status_code == 402 and code(r) == "key_budget_exceeded"

        async def refused_on_replica_2() -> bool:
            return (await c2.post("/v1/chat/completions", json=body)).status_code == 402

        await eventually(refused_on_replica_2, timeout=5, interval=0.1, what="replica 2 applying the new budget")
        async with gw1.client(key=ADMIN_KEY) as admin:
            await admin.patch(f"/api/v1/keys/{key['id']}", json={"budget_total": None, "tpm": 10})
        assert (await c1.post("/v1/chat/completions", json=body)).status_code == 200  # 8 of 10 tokens a minute
        r = await c1.post("/v1/chat/completions", json=body)
        assert r.status_code == 429 and code(r) == "key_tpm_exceeded"
