"""``/admin/*``: the panic switch (cluster-wide), masked config, events; cluster-wide ring latencies;
settings of features the gateway does not have are refused; answers are cached before the client has them."""

from __future__ import annotations

import json
import logging

import pytest
from pydantic import ValidationError

from actors.llm_gateway import ControlBoard, LatencyBoard
from deployments.llm_gateway.app import create_app
from deployments.llm_gateway.config import GatewayConfig
from rayfleet import state
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, base_config, chat, flush

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def control_store(tmp_path):
    return {"type": "sqlite", "sqlite_path": str(tmp_path / "control.db"), "dsn_env": "", "dsn": ""}


def one(up, model="m"):
    return {"a": {"base_url": up.base_url, "models": [model]}}


async def test_panic_stops_forwarding_on_every_replica(serve, up1, tmp_path, auth_env):
    shared = {
        "control": state.actor(ControlBoard, f"gw-test-control-{tmp_path.name}", store=control_store(tmp_path)),
        "latency": state.actor(LatencyBoard, f"gw-test-latency-{tmp_path.name}"),
    }
    gw1 = await serve(base_config(tmp_path, one(up1)), state=dict(shared))
    gw2 = await serve(base_config(tmp_path, one(up1)), state=dict(shared))
    async with gw1.client() as c1, gw2.client() as c2:
        assert (await c2.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        assert (await c1.post("/admin/panic", json={"reason": "leak"})).status_code == 403
        on = await c1.post("/admin/panic", json={"reason": "key leak"}, headers=ADMIN)
        assert on.status_code == 200 and on.json()["active"] and on.json()["reason"] == "key leak"
        await gw2.gateway.views.control.refresh()  # what replica 2's 0.25 s poll does
        refused = await c2.post("/v1/chat/completions", json=chat("m"))
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "panic_active"
        health = (await c2.get("/health")).json()
        assert health["panic"]["active"] and health["status"] == "degraded"
        events = (await c1.get("/admin/events", headers=ADMIN)).json()["events"]
        assert events[0]["type"] == "panic_activated"
        assert (await c1.delete("/admin/panic", headers=ADMIN)).json()["active"] is False
        await gw2.gateway.views.control.refresh()
        assert (await c2.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        await gw2.gateway.views.latency.flush()  # what replica 2's 0.5 s batch push does
        latency = (await c1.get("/api/v1/metrics/latency", headers=ADMIN)).json()
        timeline = (await c1.get("/api/v1/metrics/ring-timeline", headers=ADMIN)).json()["traces"]
    # requests answered by replica 2 show in replica 1's view: the board is cluster-wide
    assert latency["plugins"]["router"]["invocations"] == 2
    assert {"panic", "auth", "injection_scan", "link_sanitizer"} <= set(latency["plugins"])
    assert len(timeline) == 3 and set(timeline[0]["rings"]) >= {"INGRESS", "PRE_FLIGHT"}


async def test_panic_reason_is_validated(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, one(up1)))
    async with gw.client() as c:
        r = await c.post("/admin/panic", json={"reason": 5}, headers=ADMIN)
        assert r.status_code == 400
        assert (await c.get("/admin/panic", headers=ADMIN)).json()["active"] is False


async def test_config_view_masks_secrets(serve, up1, tmp_path, auth_env):
    cfg = base_config(
        tmp_path,
        one(up1),
        server={"storage": {"dsn": "postgresql://gw:s3cret@127.0.0.1/test"}},
        caching={"enabled": False, "redis_url": "redis://:hunter2@127.0.0.1:6379/0"},
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        assert (await c.get("/admin/config")).status_code == 403
        r = await c.get("/admin/config", headers=ADMIN)
    assert r.status_code == 200
    assert "s3cret" not in r.text and "hunter2" not in r.text
    body = r.json()
    assert body["server"]["storage"]["dsn"] == "***" and body["server"]["auth"]["api_keys_env"] == "LLM_PROXY_API_KEYS"
    assert body["security"]["max_payload_size_kb"] == 512


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"server": {"local_model": {"model_path": "models/x.gguf"}}}, "does not have.*server.local_model.endpoint"),
        ({"server": {"listener": {"poll_interval": "5s"}}}, "poll_interval is no longer used"),
    ],
)
def test_settings_of_unbuilt_features_are_refused(setting, message):
    with pytest.raises(ValidationError, match=message):
        GatewayConfig.model_validate(setting)


async def test_an_answer_is_cached_before_the_client_has_it(serve, up1, tmp_path, auth_env):
    cfg = base_config(tmp_path, one(up1), caching={"enabled": True})
    gw = await serve(cfg)
    async with gw.client() as c:
        for stream in (False, True):
            body = chat("m", content=f"consistency {stream}", stream=stream)
            first = await c.post("/v1/chat/completions", json=body)
            second = await c.post("/v1/chat/completions", json=body)  # no flush, no wait
            assert first.headers["x-cache"] == "MISS" and second.headers["x-cache"] == "HIT"
    assert len(up1.requests()) == 2
    await flush(gw)


async def test_openapi_documents_metrics_as_text(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, one(up1)))
    async with gw.client() as c:
        spec = (await c.get("/openapi.json")).json()
    content = spec["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert list(content) == ["text/plain"]
    assert {"/admin/panic", "/admin/plugins", "/admin/threats", "/admin/config"} <= set(spec["paths"])


def test_labelled_injection_set_detection_and_false_positives():
    from deployments.llm_gateway.injection import score
    from tests.conftest import ROOT

    rows = [json.loads(line) for line in (ROOT / "tests/data/llm_gateway/injection_labelled.jsonl").open()]
    attacks = [r for r in rows if r["label"] == "attack"]
    benign = [r for r in rows if r["label"] == "benign"]
    assert len(attacks) >= 100 and len(benign) >= 100
    assert len({r["kind"] for r in attacks}) >= 6
    block = GatewayConfig().security.injection.block_score
    detected = sum(score(r["text"]).score >= block for r in attacks) / len(attacks)
    false_pos = sum(score(r["text"]).score >= block for r in benign) / len(benign)
    assert detected >= 0.95 and false_pos <= 0.02, (detected, false_pos)


async def test_config_reload_reaches_every_replica_or_is_refused_whole(serve, up1, tmp_path, auth_env):
    shared = {"control": state.actor(ControlBoard, f"gw-test-reload-{tmp_path.name}", store=control_store(tmp_path))}
    gw1 = await serve(base_config(tmp_path, one(up1)), state=dict(shared))
    gw2 = await serve(base_config(tmp_path, one(up1)), state=dict(shared))
    three = {"model": "m", "messages": [{"role": "user", "content": str(i)} for i in range(3)]}
    async with gw1.client() as c1, gw2.client() as c2:
        refused = await c1.post(
            "/admin/config/reload", json={"security": {"max_messages": 2}, "caching": {"ttl": 5}}, headers=ADMIN
        )
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_reloadable"
        invalid = await c1.post("/admin/config/reload", json={"security": {"max_messages": 0}}, headers=ADMIN)
        assert invalid.status_code == 422 and invalid.json()["error"]["code"] == "invalid_config"
        assert "max_messages" in invalid.json()["error"]["message"]
        assert (await c2.post("/v1/chat/completions", json=three)).status_code == 200  # nothing was applied
        assert (await c1.post("/admin/config/reload", json={"security": {"max_messages": 2}})).status_code == 403
        ok = await c1.post("/admin/config/reload", json={"security": {"max_messages": 2}}, headers=ADMIN)
        assert ok.status_code == 200 and ok.json()["sections"] == ["security"]
        await gw2.gateway.views.control.refresh()  # replica 2's 0.25 s poll
        r = await c2.post("/v1/chat/completions", json=three)
        assert r.status_code == 400 and r.json()["error"]["code"] == "too_many_messages"
        await c1.post("/admin/config/reload", json={"budget": {"soft_limit": 1.0}}, headers=ADMIN)
        await gw2.gateway.views.control.refresh()
        view = (await c2.get("/admin/config", headers=ADMIN)).json()
    assert view["security"]["max_messages"] == 2 and view["budget"]["soft_limit"] == 1.0
    assert view["security"]["max_payload_size_kb"] == 512  # merged, not replaced


async def test_standalone_metrics_exporter(serve, up1, tmp_path, auth_env):
    import httpx

    from tests.conftest import free_port

    port = free_port()
    cfg = base_config(tmp_path, one(up1), server={"metrics": {"enabled": True, "port": port}})
    gw1 = await serve(cfg)
    gw2 = await serve(cfg)  # a second replica: the port is taken, it waits to take over
    async with gw1.client() as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        health = (await c.get("/health")).json()["metrics_exporter"]
    assert health["enabled"] and health["port"] == port
    assert [gw1.gateway.exporter.serving, gw2.gateway.exporter.serving].count(True) == 1
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", trust_env=False) as plain:
        r = await plain.get("/metrics")  # no key: the exporter sits outside the app
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        assert 'llm_proxy_requests_total{endpoint="/v1/chat/completions",method="POST",status="200"}' in r.text
        assert (await plain.post("/metrics")).status_code == 405
        assert (await plain.get("/admin/config")).status_code == 404


async def test_logging_level_format_and_output_apply(serve, up1, tmp_path, auth_env):
    cfg = base_config(tmp_path, one(up1), logging={"level": "warning", "format": "text", "output": "gw.log"})
    gw = await serve(cfg)
    async with gw.client(key="sk-wrong-0123456789") as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 401
    logger = logging.getLogger("rayfleet.llm_gateway")
    logger.info("an info line is under the level")
    logger.warning("a warning line", extra={"endpoint": "a"})
    text = (tmp_path / "gw.log").read_text()
    assert "an info line" not in text and "WARNING rayfleet.llm_gateway: a warning line endpoint=a" in text
    assert "sk-wrong-0123456789" not in text and not text.lstrip().startswith("{")
    gw2 = await serve(base_config(tmp_path, one(up1), logging={"level": "info", "output": str(tmp_path / "j.log")}))
    assert gw2.gateway.config.logging.format == "json"
    logger.info("now json", extra={"endpoint": "b"})
    line = json.loads((tmp_path / "j.log").read_text().splitlines()[-1])
    assert (line["msg"], line["level"], line["endpoint"]) == ("now json", "info", "b")
    assert "now json" not in (tmp_path / "gw.log").read_text()  # the handler was replaced, not added


def test_an_unwritable_log_output_stops_the_start(tmp_path, auth_env):
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="logging.output: cannot write to"):
        create_app(
            GatewayConfig.model_validate(base_config(tmp_path, {}, logging={"output": str(tmp_path / "f/x.log")}))
        )
