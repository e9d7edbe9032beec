"""Endpoint health: the one prober of the cluster marks endpoints down and up, fires
``endpoint_down``/``endpoint_up`` once per transition (delivered, signed, to a real receiver on
loopback), feeds the breakers; its settings are validated; config endpoints are read-only in the
registry; the public ``/health`` names no URL."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from actors.llm_gateway import BreakerBoard, EndpointProber, WebhookQueue
from deployments.llm_gateway.config import GatewayConfig
from rayfleet import state
from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, base_config
from tests.deployments.llm_gateway.test_gw_webhooks import SECRET, FakeClock, hook_store, receiving, until, verified
from tests.polling import eventually

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def health_cfg(tmp_path, up1, **health):
    return base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["m"], "api_key_env": "TEST_GW_HP_KEY"}},
        circuit_breaker={"failure_threshold": 2, "recovery_timeout": 5},
        health_check={"enabled": True, "interval": 600, "jitter": 0.2, "timeout": 5, **health},
        webhooks={
            "enabled": True,
            "endpoints": [
                {"name": "ops", "target": "generic", "url_env": "HOOK_OPS", "events": ["endpoint_down", "endpoint_up"]}
            ],
        },
    )


async def test_down_and_up_fire_once_per_transition_and_feed_the_breaker(serve, up1, tmp_path, auth_env, monkeypatch):
    clock = FakeClock()
    breakers = state.actor(BreakerBoard, f"gw-test-hp-breakers-{tmp_path.name}", 2, 5.0, 30.0, clock=clock)
    prober = state.actor(EndpointProber, f"gw-test-hp-prober-{tmp_path.name}", breakers)
    hooks = state.actor(WebhookQueue, f"gw-test-hp-hooks-{tmp_path.name}", 6, 0.05, 0.2, hook_store(tmp_path))
    async with receiving(free_port()) as receiver:
        monkeypatch.setenv("HOOK_OPS", f"{receiver.url}/ops")  # type: ignore[attr-defined]
        monkeypatch.setenv("LLM_PROXY_WEBHOOK_SECRET", SECRET)
        monkeypatch.setenv("TEST_GW_HP_KEY", "sk-upstream-a-123456")
        cfg = health_cfg(tmp_path, up1)
        handles = {"breakers": breakers, "prober": prober, "webhooks": hooks, "clock": clock}
        gw1 = await serve(cfg, state=handles)
        gw2 = await serve(cfg, state=handles)  # a second replica: same prober, same events
        p = prober.instance

        # both replicas pushed their targets to the one prober, whose loop made a first round
        await eventually(lambda: p.status()["rounds"] >= 1, what="the first probe round")
        assert p.status()["targets"] == ["a"] and p.status()["running"]
        first = [r for r in up1.requests() if r["path"] == "/v1/models"]
        assert first and first[0]["authorization"] == "Bearer sk-upstream-a-123456"
        assert breakers.instance.peek("a")["health"] == "up"

        async def step() -> None:
            await p.probe_round()
            for gw in (gw1, gw2):
                await gw.gateway.views.breakers.refresh()

        up1.faults({"path": "/v1/models", "status": 503, "times": 3})
        # three failed probes: one endpoint_down, at the second (the default unhealthy_threshold);
        # the breaker opens at the second too (failure_threshold 2)
        for _ in range(3):
            await step()
        view = breakers.instance.peek("a")
        assert view["health"] == "down" and view["state"] == "OPEN"
        await step()  # healthy again, once: still down (healthy_threshold 2); the breaker stays OPEN
        assert breakers.instance.peek("a")["state"] == "OPEN" and breakers.instance.peek("a")["health"] == "down"
        clock.now += 6
        # the second success: endpoint_up; the prober takes the half-open probe itself: CLOSED without a client request
        await step()
        assert breakers.instance.peek("a")["state"] == "CLOSED"
        await step()

        await until(lambda: len(receiver.of("/ops")) >= 2, [gw1, gw2])
        async with gw1.client(None) as anon:
            health = (await anon.get("/health")).json()
        got = receiver.of("/ops")
        assert [b["type"] for _, b in got] == ["endpoint_down", "endpoint_up"]
        assert got[0][1]["data"] == {"endpoint": "a", "reason": "HTTP 503"}
        assert all(verified(h, raw) for h, raw in receiver.raw)
        status = hooks.instance.status()
        assert status["queued"] == 2 and status["duplicates"] >= 2  # both replicas reported both events
        assert health["endpoints"][0]["health"] == "up"


async def test_the_loop_probes_again_and_again_with_jitter(serve, up1, tmp_path, auth_env, monkeypatch):
    monkeypatch.setenv("HOOK_OPS", "")
    cfg = health_cfg(tmp_path, up1, interval=0.05, jitter=0.5, timeout=0.05)
    cfg["webhooks"] = {"enabled": False}
    gw = await serve(cfg)
    prober = gw.gateway.handles.prober
    assert prober is not None
    p = prober.instance
    await eventually(lambda: p.status()["rounds"] >= 3, what="three rounds of the loop")
    assert 0.025 <= p.status()["last_delay"] <= 0.075
    assert p.status()["probes"] >= 3  # one per round
    # on a loaded machine a round's probe may time out (50 ms) before it reaches the upstream: the loop
    # goes on, so one reaches it later
    await eventually(
        lambda: [r for r in up1.requests() if r["path"] == "/v1/models"], what="a probe reaching the upstream"
    )


def test_jitter_spreads_the_interval_both_ways():
    low = EndpointProber(None, rng=lambda: 0.0)  # type: ignore[arg-type]
    high = EndpointProber(None, rng=lambda: 0.999999)  # type: ignore[arg-type]
    for p in (low, high):
        p._settings = {"interval": 10.0, "jitter": 0.3, "timeout": 1.0}
    assert low.delay() == pytest.approx(7.0)
    assert high.delay() == pytest.approx(13.0, abs=1e-4)


@pytest.mark.parametrize(
    "health",
    [
        {"interval": 0},
        {"interval": -1},
        {"jitter": 1.0},
        {"jitter": -0.1},
        {"timeout": 0},
        {"interval": 2, "timeout": 3},
        {"every": 3},
    ],
)
def test_bad_health_settings_are_refused(health):
    with pytest.raises(ValidationError):
        GatewayConfig.model_validate({"health_check": health})


def test_health_settings_take_durations():
    cfg = GatewayConfig.model_validate({"health_check": {"interval": "2m", "timeout": "10s", "jitter": 0.1}})
    assert (cfg.health_check.interval, cfg.health_check.timeout) == (120.0, 10.0)


async def test_config_endpoints_are_listed_read_only_and_refuse_changes(
    serve, up1, up2, tmp_path, auth_env, monkeypatch
):
    monkeypatch.setenv("TEST_GW_HP_KEY", "sk-a-1")
    gw = await serve(
        base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"], "api_key_env": "TEST_GW_HP_KEY"}})
    )
    async with gw.client(ADMIN_KEY) as c:
        body = {"name": "lab", "base_url": up2.base_url, "provider": "vllm", "priority": 1}
        assert (await c.post("/api/v1/registry", json=body)).status_code == 201
        listed = (await c.get("/api/v1/registry")).json()
        assert [e["id"] for e in listed["data"]] == ["lab"] and listed["data"][0]["read_only"] is False
        (configured,) = listed["configured"]
        assert configured["id"] == "a" and configured["read_only"] is True and configured["source"] == "config"
        assert configured["api_key"] == "********" and "sk-a-1" not in str(listed)
        for method, path, payload in (
            ("POST", "/api/v1/registry/a/toggle", None),
            ("POST", "/api/v1/registry/a/priority", {"priority": 3}),
            ("POST", "/api/v1/registry/a/probe", None),
            ("DELETE", "/api/v1/registry/a", None),
        ):
            r = await c.request(method, path, json=payload)
            assert r.status_code == 409, (path, r.text)
            assert r.json()["error"]["code"] == "registry_entry_read_only"
        assert (await c.post("/api/v1/registry", json={**body, "name": "A"})).status_code == 409
        assert (await c.get("/api/v1/registry")).json()["configured"][0]["priority"] == 0


async def test_public_health_names_no_url(serve, up1, up2, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"]}}))
    async with gw.client(ADMIN_KEY) as c:
        body = {"name": "lab", "base_url": up2.base_url, "provider": "vllm", "priority": 1}
        assert (await c.post("/api/v1/registry", json=body)).status_code == 201
        assert (await c.post("/api/v1/registry/lab/toggle")).status_code == 200
    async with gw.client(None) as anon:
        r = await anon.get("/health")
    assert r.status_code == 200
    text = r.text
    assert {e["name"] for e in r.json()["endpoints"]} == {"a", "lab"}
    assert r.json()["health_check"] == {"enabled": False}  # the prober is off in base_config
    for leak in (up1.base_url, up2.base_url, "127.0.0.1", "http://", "https://", f":{up1.port}", f":{up2.port}"):
        assert leak not in text, leak


async def test_an_answer_below_500_is_up_and_a_dead_port_is_down(up1):
    breakers = state.actor(BreakerBoard, "gw-test-hp-codes", 5, 60.0, 30.0)
    breakers.instance.configure_health(1, 1)  # one probe decides (hysteresis: test_gw_health_hysteresis.py)
    prober = EndpointProber(breakers)
    prober._targets = [
        {"name": "listing", "url": up1.base_url + "/models", "headers": {}},
        {"name": "no-listing", "url": up1.url + "/nothing-here", "headers": {}},
        {"name": "dead", "url": f"http://127.0.0.1:{free_port()}/v1/models", "headers": {}},
    ]
    up1.faults({"path": "/v1/models", "status": 401, "times": 1})
    outcomes = {name: (ok, reason) for name, ok, reason in await prober.probe_round()}
    assert outcomes["listing"] == (True, "") and outcomes["no-listing"] == (True, "")
    assert outcomes["dead"] == (False, "connection failed (ConnectError)")
    assert [breakers.instance.peek(n)["health"] for n in ("listing", "no-listing", "dead")] == ["up", "up", "down"]
