"""Auth, admission control, client rate limits and the error table, through the pipeline."""

from __future__ import annotations

import asyncio
import csv

import pytest

from tests.conftest import DATA
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, INFER_KEY, base_config, chat


def one(up1):
    return {"a": {"base_url": up1.base_url, "models": ["m"]}}


async def test_auth_table(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, one(up1)))
    async with gw.client(key=None) as c:
        r = await c.post("/v1/chat/completions", json=chat("m"))
        assert r.status_code == 401 and r.json()["error"]["code"] == "missing_api_key"
        r = await c.post("/v1/chat/completions", json=chat("m"), headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
        r = await c.post("/v1/chat/completions", json=chat("m"), headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        assert r.status_code == 403
        assert (
            await c.post("/v1/chat/completions", json=chat("m"), headers={"x-api-key": INFER_KEY})
        ).status_code == 200
        for path in ("/metrics", "/api/v1/metrics/latency", "/api/v1/metrics/ring-timeline"):
            assert (await c.get(path, headers={"Authorization": f"Bearer {INFER_KEY}"})).status_code == 403
            assert (await c.get(path, headers={"Authorization": f"Bearer {ADMIN_KEY}"})).status_code == 200
        health = await c.get("/health")  # public: it names endpoints and their states, never where they are
        assert health.status_code == 200 and health.json()["endpoints"][0]["name"] == "a"
        assert up1.base_url not in health.text and "127.0.0.1" not in health.text
        text = (await c.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})).text
    assert 'llm_proxy_auth_failures_total{reason="missing"} 1.0' in text
    assert 'llm_proxy_auth_failures_total{reason="scope"}' in text
    assert INFER_KEY not in text


async def test_admin_keys_fall_back_to_inference_keys_with_warning(serve, up1, tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_PROXY_API_KEYS", INFER_KEY)
    monkeypatch.delenv("LLM_PROXY_ADMIN_KEYS", raising=False)
    gw = await serve(base_config(tmp_path, one(up1)))
    async with gw.client() as c:
        assert (await c.get("/metrics")).status_code == 200
        assert any("LLM_PROXY_ADMIN_KEYS" in w for w in (await c.get("/health")).json()["warnings"])


async def test_dev_mode_disables_auth_loudly(serve, up1, tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_PROXY_DEV_MODE", "1")
    gw = await serve(base_config(tmp_path, one(up1)))
    async with gw.client(key=None) as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        assert any("DEV_MODE" in w for w in (await c.get("/health")).json()["warnings"])


async def test_error_table_rows(serve, up1, tmp_path, auth_env):
    cfg = base_config(
        tmp_path, one(up1), security={"max_payload_size_kb": 1, "max_messages": 3, "max_nesting_depth": 5}
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        big = chat("m", content="x" * 2000)
        assert (await c.post("/v1/chat/completions", json=big)).status_code == 413
        many = {"model": "m", "messages": [{"role": "user", "content": "a"}] * 4}
        assert (await c.post("/v1/chat/completions", json=many)).json()["error"]["code"] == "too_many_messages"
        deep = chat("m", metadata={"a": {"b": {"c": {"d": {"e": 1}}}}})
        r = await c.post("/v1/chat/completions", json=deep)
        assert r.status_code == 400 and r.json()["error"]["code"] == "nesting_too_deep"
        r = await c.post("/v1/chat/completions", content=b"{nope", headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
        assert (await c.post("/v1/chat/completions", json={"messages": []})).status_code == 400
        assert (await c.post("/v1/chat/completions", json={"model": "m", "messages": "x"})).status_code == 400
        assert (await c.post("/v1/embeddings", json={"model": "m", "input": "x", "stream": True})).status_code == 400
        assert (await c.get("/v1/chat/completions")).status_code == 405
    assert len(up1.requests()) == 0


async def test_admission_sheds_with_retry_after(serve, up1, tmp_path, auth_env):
    up1.faults({"latency_ms": 400, "times": -1})
    cfg = base_config(tmp_path, one(up1), admission={"max_in_flight": 2, "max_queued": 1, "retry_after_s": 7})
    gw = await serve(cfg)
    async with gw.client() as c:
        results = await asyncio.gather(*(c.post("/v1/chat/completions", json=chat("m")) for _ in range(6)))
        statuses = sorted(r.status_code for r in results)
        assert statuses == [200, 200, 200, 503, 503, 503]
        shed = [r for r in results if r.status_code == 503]
        assert all(r.headers["Retry-After"] == "7" for r in shed)
        assert (await c.get("/health")).status_code == 200  # control routes are not admitted
        text = (await c.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})).text
    assert "llm_proxy_load_shed_total 3.0" in text


async def test_admission_zero_disables_and_share_per_replica(serve, up1, tmp_path):
    from deployments.llm_gateway.config import GatewayConfig

    assert GatewayConfig(admission={"max_in_flight": 0}).admission_limits() == (0, 0)
    assert GatewayConfig().admission_limits(1) == (100, 200)
    assert GatewayConfig().admission_limits(2) == (50, 100)
    assert GatewayConfig(admission={"max_in_flight": 10, "queue_factor": 0.5}).admission_limits() == (10, 5)


async def test_client_rate_limit_per_key_shared(serve, up1, tmp_path, auth_env):
    cfg = base_config(tmp_path, one(up1), rate_limiting={"requests_per_minute": 5})
    gw1 = await serve(cfg)
    gw2 = await serve(cfg)  # a second replica sharing the same limiter actor
    codes = []
    async with gw1.client() as c1, gw2.client() as c2:
        for i in range(8):
            codes.append((await (c1 if i % 2 else c2).post("/v1/chat/completions", json=chat("m"))).status_code)
        other = gw1.client(key="sk-test-second-0123456789")
        async with other:
            assert (await other.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        r = await c1.post("/v1/chat/completions", json=chat("m"))
    assert codes.count(200) == 5 and codes.count(429) == 3
    assert int(r.headers["Retry-After"]) >= 1 and r.json()["error"]["type"] == "rate_limit_error"


async def test_endpoint_rpm_moves_to_next_endpoint_then_429(serve, up1, up2, tmp_path, auth_env):
    cfg = base_config(
        tmp_path,
        {
            "a": {"base_url": up1.base_url, "models": ["m"], "rate_limit": {"rpm": 2}},
            "b": {"base_url": up2.base_url, "models": ["m"], "rate_limit": {"rpm": 2}},
        },
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        codes = [(await c.post("/v1/chat/completions", json=chat("m"))).status_code for _ in range(6)]
    assert codes[:4] == [200] * 4 and codes[4:] == [429, 429]
    assert len(up1.requests()) == 2 and len(up2.requests()) == 2


async def test_endpoint_tpm_limit(serve, up1, tmp_path, auth_env):
    cfg = base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"], "rate_limit": {"tpm": 100}}})
    gw = await serve(cfg)
    async with gw.client() as c:
        small = [(await c.post("/v1/chat/completions", json=chat("m", max_tokens=40))).status_code for _ in range(3)]
        # 3 x (3 prompt + 40 reserved) fit; actual use (3 + 10) is credited back, leaving room
        big = [
            (await c.post("/v1/chat/completions", json=chat("m", content="y" * 240, max_tokens=5))).status_code
            for _ in range(2)
        ]
    assert small == [200, 200, 200] and big == [429, 429]


def _rows() -> list[tuple[str, str]]:
    with open(DATA / "routes.tsv") as fh:
        return [(r[1], r[2]) for r in csv.reader(fh, delimiter="\t") if r and r[0] == "llm_gateway"]


@pytest.mark.parametrize("method,path", _rows())
async def test_every_route_of_routes_tsv_is_served(serve, up1, tmp_path, auth_env, method, path):
    gw = await serve(base_config(tmp_path, one(up1)))
    async with gw.client(key=ADMIN_KEY) as c:
        created = await c.post(
            "/api/v1/registry", json={"name": "r", "base_url": up1.base_url, "provider": "openai_compat", "priority": 0}
        )
        assert created.status_code == 201, created.text
        ident = "r" if "/registry/" in path else "a"
        r = await c.request(method, path.replace("{id}", ident), json={"priority": 1})
    assert r.status_code not in (404, 405), r.text
