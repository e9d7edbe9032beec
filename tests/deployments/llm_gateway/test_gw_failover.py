"""Rotation, failover, Retry-After, key cooldown and circuit breakers through the pipeline."""

from __future__ import annotations

import asyncio
import json

from actors.llm_gateway import BreakerBoard
from rayfleet import state
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, base_config, chat


def two(up1, up2, **ep):
    return {
        "a": {"base_url": up1.base_url, "models": ["gpt-4o-mini"], **ep},
        "b": {"base_url": up2.base_url, "models": ["gpt-4o-mini"], **ep},
    }


async def test_round_robin_over_endpoints(serve, up1, up2, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, two(up1, up2)))
    async with gw.client() as c:
        seen = [(await c.post("/v1/chat/completions", json=chat())).headers["x-llm-endpoint"] for _ in range(4)]
    assert seen == ["a", "b", "a", "b"]


async def test_failover_on_503_then_success(serve, up1, up2, tmp_path, auth_env):
    up1.faults({"status": 503, "times": -1})
    gw = await serve(base_config(tmp_path, two(up1, up2)))
    async with gw.client() as c:
        for _ in range(3):
            r = await c.post("/v1/chat/completions", json=chat())
            assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"].startswith("[up2]")


async def test_non_switch_status_is_returned_not_retried(serve, up1, up2, tmp_path, auth_env):
    up1.faults({"status": 400, "times": -1})
    up2.faults({"status": 400, "times": -1})
    gw = await serve(base_config(tmp_path, two(up1, up2)))
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat())
    assert r.status_code == 400
    assert "injected 400" in r.json()["error"]["message"]
    assert len(up1.requests()) + len(up2.requests()) == 1


async def test_all_attempts_fail_gives_last_status(serve, up1, tmp_path, auth_env):
    up1.faults({"status": 500, "times": -1})
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["gpt-4o-mini"]}},
        circuit_breaker={"failure_threshold": 50},
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat())
    assert r.status_code == 500 and r.json()["error"]["type"] == "api_error"
    assert len(up1.requests()) == 4  # 1 + max_retries (3)


async def test_connection_refused_fails_over(serve, up2, tmp_path, auth_env):
    from tests.conftest import free_port

    dead = f"http://127.0.0.1:{free_port()}/v1"
    gw = await serve(
        base_config(
            tmp_path, {"dead": {"base_url": dead, "models": ["m"]}, "b": {"base_url": up2.base_url, "models": ["m"]}}
        )
    )
    async with gw.client() as c:
        for _ in range(3):
            r = await c.post("/v1/chat/completions", json=chat("m"))
            assert r.status_code == 200 and r.headers["x-llm-endpoint"] == "b"


async def test_429_cools_the_key_and_rotates_keys(serve, keyed, tmp_path, auth_env, monkeypatch):
    monkeypatch.setenv("UPSTREAM_KEYS", "uk-a,uk-b")
    keyed.faults({"status": 429, "times": 1, "retry_after": 30})
    gw = await serve(
        base_config(tmp_path, {"k": {"base_url": keyed.base_url, "api_key_env": "UPSTREAM_KEYS", "models": ["m"]}})
    )
    async with gw.client() as c:
        for _ in range(3):
            assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
    used = [r["authorization"] for r in keyed.requests()]
    assert used[0] == "Bearer uk-a" and used[1] == "Bearer uk-b"
    assert used[2:] == ["Bearer uk-b", "Bearer uk-b"]  # uk-a rests for Retry-After (30 s)


async def test_retry_after_honoured_on_same_endpoint(serve, up1, tmp_path, auth_env):
    up1.faults({"status": 503, "times": 1, "retry_after": 1})
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"]}}))
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("m"))
    assert r.status_code == 200
    times = [q["time"] for q in up1.requests()]
    assert len(times) == 2 and times[1] - times[0] >= 0.95


async def test_breaker_opens_skips_endpoint_and_resets(serve, up1, up2, tmp_path, auth_env):
    up1.faults({"status": 500, "times": -1})
    gw = await serve(base_config(tmp_path, two(up1, up2), circuit_breaker={"failure_threshold": 2}))
    async with gw.client() as c:
        for _ in range(4):
            assert (await c.post("/v1/chat/completions", json=chat())).status_code == 200
        assert len(up1.requests()) == 2  # opened after two failures, then left out
        board = gw.gateway.handles.breakers.instance
        assert board.peek("a")["state"] == "OPEN"
        assert [e["event"] for e in board.events()] == ["circuit_open"]
        await gw.gateway.views.breakers.refresh()
        metrics = await gw.gateway.metrics_client.render()
        assert b'llm_proxy_circuit_open{endpoint="a"} 1.0' in metrics
        health = (await c.get("/health")).json()
        assert {e["name"]: e["circuit_state"] for e in health["endpoints"]}["a"] == "OPEN"
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        assert (await c.post("/api/v1/circuit-breaker/a/reset")).status_code == 403
        r = await c.post("/api/v1/circuit-breaker/a/reset", headers=admin)
        assert r.status_code == 200 and r.json()["circuit_state"] == "CLOSED"
        assert (await c.post("/api/v1/circuit-breaker/nope/reset", headers=admin)).status_code == 404


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_half_open_single_probe_under_concurrency(serve, up1, tmp_path, auth_env):
    up1.faults({"status": 500, "times": 2}, {"latency_ms": 300, "times": 1})
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["m"]}},
        circuit_breaker={"failure_threshold": 2, "recovery_timeout": "200ms"},
        rotation={"failover": {"max_retries": 0}},
    )
    clock = FakeClock()
    breakers = state.actor(BreakerBoard, f"gw-test-breakers-{tmp_path.name}", 2, 0.2, 30.0, clock=clock)
    gw = await serve(cfg, state={"breakers": breakers, "clock": clock})
    async with gw.client() as c:
        for _ in range(2):
            assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 500
        clock.now += 0.3  # past recovery_timeout: the next request may probe
        await gw.gateway.views.breakers.refresh()
        up1.reset()
        up1.faults({"latency_ms": 300, "times": 1})
        results = await asyncio.gather(*(c.post("/v1/chat/completions", json=chat("m")) for _ in range(10)))
    assert sorted(r.status_code for r in results).count(200) == 1
    others = [(r.status_code, r.headers.get("Retry-After"), r.text) for r in results if r.status_code != 200]
    assert all(s == 503 and ra for s, ra, _ in others), others
    assert len(up1.requests()) == 1
    assert gw.gateway.handles.breakers.instance.peek("a")["state"] == "CLOSED"


async def test_stream_fails_over_before_first_byte(serve, up1, up2, tmp_path, auth_env):
    up1.faults({"cut_after": 0, "times": -1})
    gw = await serve(base_config(tmp_path, two(up1, up2)))
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat(stream=True))
    assert r.status_code == 200 and r.headers["x-llm-endpoint"] == "b"
    assert r.text.rstrip().endswith("data: [DONE]") and "[up2]" in r.text


async def test_stream_upstream_error_status_fails_over(serve, up1, up2, tmp_path, auth_env):
    up1.faults({"status": 503, "times": -1})
    gw = await serve(base_config(tmp_path, two(up1, up2)))
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat(stream=True))
    assert r.status_code == 200 and "[up2]" in r.text


async def test_stream_cut_after_first_byte_ends_with_error_event(serve, up1, tmp_path, auth_env):
    up1.faults({"cut_after": 3, "times": 1})
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"]}}))
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("m", stream=True))
    assert r.status_code == 200
    events = [e for e in r.text.split("\n\n") if e.strip()]
    assert events[-1] == "data: [DONE]"
    assert json.loads(events[-2][6:])["error"]["code"] == "upstream_error"


async def test_malformed_and_error_events_mid_stream(serve, up1, tmp_path, auth_env):
    # The double pauses before each event, so the first event is read (and the stream committed)
    # before the bad one arrives; bad bytes read together with the first event fail over instead.
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"]}}))
    async with gw.client() as c:
        for rule in ({"malformed_after": 2}, {"error_event_after": 2}):
            up1.faults({**rule, "chunk_delay_ms": 50, "times": 1})
            r = await c.post("/v1/chat/completions", json=chat("m", stream=True))
            events = [e for e in r.text.split("\n\n") if e.strip()]
            assert events[-1] == "data: [DONE]" and '"error"' in events[-2]


async def test_stalled_stream_hits_the_socket_read_timeout(serve, up1, tmp_path, auth_env):
    up1.faults({"stall_after": 2, "times": 1})
    cfg = base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"]}}, server={"timeout": "500ms"})
    gw = await serve(cfg)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("m", stream=True))
    events = [e for e in r.text.split("\n\n") if e.strip()]
    assert events[-1] == "data: [DONE]" and "timed out waiting for the next event" in events[-2]


async def test_slow_but_steady_stream_is_not_cut_by_a_total_timeout(serve, up1, tmp_path, auth_env):
    up1.faults({"chunk_delay_ms": 150, "times": 1})
    cfg = base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"]}}, server={"timeout": "400ms"})
    gw = await serve(cfg)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("m", stream=True))
    assert '"error"' not in r.text and r.text.rstrip().endswith("[DONE]")


async def test_total_timeout_is_the_ceiling_of_an_upstream_request(serve, up1, tmp_path, auth_env):
    # each read wait is short enough for server.timeout, the whole request is not
    up1.faults({"chunk_delay_ms": 200, "times": -1})
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["m"]}},
        server={"timeout": "5s", "total_timeout": "500ms"},
        rotation={"failover": {"enabled": False}},
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("m", stream=True, max_tokens=50))
        up1.reset()
        up1.faults({"latency_ms": 1500, "times": 1})
        slow = await c.post("/v1/chat/completions", json=chat("m"))
    events = [e for e in r.text.split("\n\n") if e.strip()]
    assert events[-1] == "data: [DONE]" and "server.total_timeout (0.5 s) reached" in events[-2]
    assert slow.status_code == 504 and "a timed out" in slow.json()["error"]["message"]
    assert slow.json()["error"]["code"] == "upstream_timeout"
