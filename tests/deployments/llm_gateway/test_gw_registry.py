"""The endpoint registry control plane (spec 001 §A.1, §3, §4, §5) through the real app.

Gateways are served by uvicorn on loopback with the in-process actor stand-ins; the
upstreams are upstream-double processes; storage is the real SQLite file or the real
PostgreSQL server.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest

from rayfleet import state
from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, INFER_KEY, base_config, chat, start_double
from tests.polling import eventually

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def cfg(tmp_path: Path, up1: Any, **overrides: Any) -> dict[str, Any]:
    return base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["m"]}},
        registry={"refresh_interval": 0.1, **overrides.pop("registry", {})},
        **overrides,
    )


def entry(name: str, base_url: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "base_url": base_url, "provider": "openai_compat", "priority": 0, **extra}


async def test_crud_list_fields_and_toggle_table(serve, up1, up2, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client(key=ADMIN_KEY) as c:
        empty = (await c.get("/api/v1/registry")).json()
        assert (empty["data"], empty["total"]) == ([], 0)
        assert [(e["id"], e["read_only"]) for e in empty["configured"]] == [("a", True)]
        r = await c.post(
            "/api/v1/registry",
            json=entry(
                "Lab GPU", up2.base_url + "/", api_key="sk-lab-secret-1", models="llama3, qwen2 ,,llama3", priority=3
            ),
        )
        assert r.status_code == 201, r.text
        e = r.json()
        assert e["id"] == "lab-gpu" and e["name"] == "Lab GPU" and e["base_url"] == up2.base_url
        assert e["models"] == ["llama3", "qwen2"] and e["priority"] == 3 and e["provider"] == "openai_compat"
        assert e["status"] == "FOUND" and e["routable"] is False
        assert e["api_key_set"] is True and e["api_key"] == "********"
        assert e["circuit_state"] == "CLOSED" and e["latency_ms"] is None
        dup = await c.post("/api/v1/registry", json=entry("lab gpu", up1.base_url))
        assert dup.status_code == 409 and dup.json()["error"]["code"] == "registry_entry_exists"
        clash = await c.post("/api/v1/registry", json=entry("a", up1.base_url))  # a configured endpoint's name
        assert clash.status_code == 409
        listed = await c.get("/api/v1/registry")
        assert listed.json()["total"] == 1 and "sk-lab-secret-1" not in listed.text
        assert set(listed.json()["data"][0]) >= {
            "id",
            "name",
            "base_url",
            "provider",
            "priority",
            "models",
            "api_key_set",
            "status",
            "circuit_state",
            "latency_ms",
        }
        # §3: any other -> verified; verified -> IGNORED; IGNORED -> verified
        seen = []
        for _ in range(3):
            r = await c.post("/api/v1/registry/lab-gpu/toggle")
            assert r.status_code == 200
            seen.append(r.json()["status"])
        assert seen == ["verified", "IGNORED", "verified"]
        r = await c.post("/api/v1/registry/lab-gpu/priority", json={"priority": -7})
        assert r.status_code == 200 and r.json()["priority"] == -7
        assert (await c.get("/api/v1/registry")).json()["data"][0]["priority"] == -7
        r = await c.delete("/api/v1/registry/lab-gpu")
        assert r.status_code == 200 and r.json() == {"id": "lab-gpu", "deleted": True}
        assert (await c.get("/api/v1/registry")).json()["total"] == 0
        for method, path, body in (
            ("POST", "/probe", None),
            ("POST", "/toggle", None),
            ("POST", "/priority", {"priority": 1}),
            ("DELETE", "", None),
        ):
            r = await c.request(method, f"/api/v1/registry/lab-gpu{path}", json=body)
            assert r.status_code == 404, (method, path)
            assert r.json()["error"] == {
                "message": "unknown registry entry 'lab-gpu'",
                "type": "not_found_error",
                "code": "registry_entry_not_found",
                "param": None,
            }


async def test_discovered_status_also_toggles_to_verified(serve, up1, tmp_path, auth_env):
    from actors.llm_gateway.registry import DISCOVERED, FOUND, IGNORED, VERIFIED, toggled

    assert [toggled(s) for s in (VERIFIED, FOUND, IGNORED, DISCOVERED)] == [IGNORED, VERIFIED, VERIFIED, VERIFIED]


@pytest.mark.parametrize(
    "body,where",
    [
        ({"base_url": "http://h:1/v1", "provider": "openai", "priority": 0}, "name"),
        ({"name": "  ", "base_url": "http://h:1/v1", "provider": "openai", "priority": 0}, "name"),
        ({"name": "x", "base_url": "ftp://h/v1", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "not a url", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://u:p@h:1/v1", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/v1?k=1", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/v1\r\nX-Injected: 1", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/v1\r\n", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/v1\n/x", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/v\x001", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/a b", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/v1\x7f", "provider": "openai", "priority": 0}, "base_url"),
        ({"name": "x", "base_url": "http://h:1/v1", "provider": "cohere", "priority": 0}, "provider"),
        ({"name": "x", "base_url": "http://h:1/v1", "provider": "openai", "priority": "1"}, "priority"),
        ({"name": "x", "base_url": "http://h:1/v1", "provider": "openai", "priority": 1.5}, "priority"),
        ({"name": "x", "base_url": "http://h:1/v1", "provider": "openai"}, "priority"),
        ({"name": "x", "base_url": "http://h:1/v1", "provider": "openai", "priority": 0, "models": [1]}, "models"),
        ({"name": "x", "base_url": "http://h:1/v1", "provider": "openai", "priority": 0, "extra": 1}, "extra"),
    ],
)
async def test_bad_input_is_422_and_writes_nothing(serve, up1, tmp_path, auth_env, body, where):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client(key=ADMIN_KEY) as c:
        r = await c.post("/api/v1/registry", json=body)
        assert r.status_code == 422, r.text
        err = r.json()["error"]
        assert err["type"] == "invalid_request_error" and err["code"] == "validation_error"
        assert err["message"].startswith(where)
        assert (await c.get("/api/v1/registry")).json()["total"] == 0


async def test_bad_json_and_bad_priority_bodies(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client(key=ADMIN_KEY) as c:
        r = await c.post("/api/v1/registry", content=b"{nope", headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
        assert (await c.post("/api/v1/registry", json=["x"])).status_code == 400
        assert (await c.post("/api/v1/registry", json=entry("p", up1.base_url))).status_code == 201
        for bad in ({"priority": "high"}, {}, {"priority": True}, {"priority": 100000}):
            r = await c.post("/api/v1/registry/p/priority", json=bad)
            assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error", bad
        assert (await c.get("/api/v1/registry")).json()["data"][0]["priority"] == 0


async def test_admin_keys_only(serve, up1, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    routes = [
        ("GET", "/api/v1/registry", None),
        ("POST", "/api/v1/registry", entry("z", up1.base_url)),
        ("POST", "/api/v1/registry/scan", None),
        ("POST", "/api/v1/registry/z/probe", None),
        ("POST", "/api/v1/registry/z/toggle", None),
        ("POST", "/api/v1/registry/z/priority", {"priority": 1}),
        ("DELETE", "/api/v1/registry/z", None),
    ]
    async with gw.client(key=None) as c:
        for method, path, body in routes:
            assert (await c.request(method, path, json=body)).status_code == 401, path
            r = await c.request(method, path, json=body, headers={"Authorization": f"Bearer {INFER_KEY}"})
            assert r.status_code == 403 and r.json()["error"]["code"] == "wrong_key_scope", path
            # a bad body from a wrong key is still refused for the key, not the body
            r = await c.request(method, path, content=b"{", headers={"Authorization": f"Bearer {INFER_KEY}"})
            assert r.status_code == 403
        assert (await c.get("/api/v1/registry", headers=ADMIN)).json()["total"] == 0


async def test_verified_entry_receives_traffic_by_priority_and_ignored_stops(serve, up1, up2, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client() as c, gw.client(key=ADMIN_KEY) as admin:
        r = await admin.post("/api/v1/registry", json=entry("reg", up2.base_url, models=["regm", "m"], priority=-1))
        assert r.status_code == 201
        assert (await c.post("/v1/chat/completions", json=chat("regm"))).status_code == 404  # FOUND: not routable
        assert (await admin.post("/api/v1/registry/reg/toggle")).json()["status"] == "verified"
        r = await c.post("/v1/chat/completions", json=chat("regm"))
        assert r.status_code == 200 and r.headers["x-llm-endpoint"] == "reg"
        assert r.json()["choices"][0]["message"]["content"].startswith("[up2]")
        assert "regm" in [m["id"] for m in (await c.get("/v1/models")).json()["data"]]
        # priority -1 beats the configured endpoint's 0 for the model both serve
        served = {(await c.post("/v1/chat/completions", json=chat("m"))).headers["x-llm-endpoint"] for _ in range(4)}
        assert served == {"reg"}
        await admin.post("/api/v1/registry/reg/priority", json={"priority": 5})
        served = {(await c.post("/v1/chat/completions", json=chat("m"))).headers["x-llm-endpoint"] for _ in range(4)}
        assert served == {"a"}
        listed = (await admin.get("/api/v1/registry")).json()["data"][0]
        assert listed["circuit_state"] == "CLOSED" and listed["routable"] is True
        assert (await admin.post("/api/v1/registry/reg/toggle")).json()["status"] == "IGNORED"
        before = len(up2.requests())
        assert (await c.post("/v1/chat/completions", json=chat("regm"))).status_code == 404
        for _ in range(3):
            assert (await c.post("/v1/chat/completions", json=chat("m"))).headers["x-llm-endpoint"] == "a"
        assert len(up2.requests()) == before
        await admin.post("/api/v1/registry/reg/toggle")
        assert (await c.post("/v1/chat/completions", json=chat("regm"))).status_code == 200
        await admin.delete("/api/v1/registry/reg")
        assert (await c.post("/v1/chat/completions", json=chat("regm"))).status_code == 404


async def test_registry_breaker_state_and_reset(serve, up1, up2, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    up2.faults({"status": 500, "times": -1})
    async with gw.client() as c, gw.client(key=ADMIN_KEY) as admin:
        await admin.post("/api/v1/registry", json=entry("flaky", up2.base_url, models=["fm"], priority=0))
        await admin.post("/api/v1/registry/flaky/toggle")
        for _ in range(3):
            await c.post("/v1/chat/completions", json=chat("fm"))
        listed = (await admin.get("/api/v1/registry")).json()["data"][0]
        assert listed["circuit_state"] == "OPEN" and listed["failure_count"] >= 3
        r = await admin.post("/api/v1/circuit-breaker/flaky/reset")
        assert r.status_code == 200 and r.json()["circuit_state"] == "CLOSED"
        assert (await admin.get("/api/v1/registry")).json()["data"][0]["circuit_state"] == "CLOSED"


async def test_change_reaches_every_replica(serve, up1, up2, tmp_path, auth_env):
    gw1 = await serve(cfg(tmp_path, up1, registry={"refresh_interval": 0.2}))
    gw2 = await serve(cfg(tmp_path, up1, registry={"refresh_interval": 0.2}))
    async with gw1.client(key=ADMIN_KEY) as admin, gw2.client() as c2:
        await admin.post("/api/v1/registry", json=entry("shared", up2.base_url, models=["sm"], priority=0))
        await admin.post("/api/v1/registry/shared/toggle")

        async def status() -> int:
            return (await c2.post("/v1/chat/completions", json=chat("sm"))).status_code

        async def routed() -> bool:
            return await status() == 200

        async def dropped() -> bool:
            return await status() == 404

        await eventually(routed, timeout=5, interval=0.1, what="the second replica routing the verified entry")
        await admin.post("/api/v1/registry/shared/toggle")
        await eventually(dropped, timeout=5, interval=0.1, what="the second replica dropping the IGNORED entry")


async def test_key_is_used_encrypted_at_rest_and_survives_restart(serve, up1, tmp_path, auth_env):
    secret = "uk-registry-secret-" + uuid.uuid4().hex
    double = start_double("regkeyed", keys=secret)
    try:
        config = cfg(tmp_path, up1)
        gw = await serve(config)
        async with gw.client() as c, gw.client(key=ADMIN_KEY) as admin:
            await admin.post(
                "/api/v1/registry", json=entry("keyed", double.base_url, api_key=secret, models="km", priority=0)
            )
            await admin.post("/api/v1/registry/keyed/toggle")
            assert (await c.post("/v1/chat/completions", json=chat("km"))).status_code == 200
            assert double.requests()[-1]["authorization"] == f"Bearer {secret}"
            assert secret not in (await admin.get("/api/v1/registry")).text
        for path in tmp_path.iterdir():
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
        key_file = tmp_path / "registry.key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        state.reset_local_state()  # the actor is gone: a restart reloads from the store
        gw2 = await serve(config)
        async with gw2.client() as c, gw2.client(key=ADMIN_KEY) as admin:
            listed = (await admin.get("/api/v1/registry")).json()["data"]
            assert [(e["id"], e["status"], e["api_key_set"]) for e in listed] == [("keyed", "verified", True)]
            r = await c.post("/v1/chat/completions", json=chat("km"))
            assert r.status_code == 200 and r.headers["x-llm-endpoint"] == "keyed"
    finally:
        double.stop()


async def test_key_from_env_and_wrong_key_reported(serve, up1, tmp_path, auth_env, monkeypatch):
    monkeypatch.setenv("LLM_PROXY_REGISTRY_KEY", "a passphrase for the registry")
    config = cfg(tmp_path, up1)
    gw = await serve(config)
    async with gw.client(key=ADMIN_KEY) as admin:
        await admin.post("/api/v1/registry", json=entry("k", up1.base_url, api_key="sk-env-secret-42", priority=0))
    assert not (tmp_path / "registry.key").exists()
    state.reset_local_state()
    monkeypatch.setenv("LLM_PROXY_REGISTRY_KEY", "another passphrase")
    gw2 = await serve(config)
    async with gw2.client(key=ADMIN_KEY) as admin:
        e = (await admin.get("/api/v1/registry")).json()["data"][0]
    assert e["api_key_set"] is True and "cannot be decrypted" in e["api_key_error"]


async def test_probe_stores_latency_and_models(serve, up1, up2, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    async with gw.client(key=ADMIN_KEY) as admin, gw.client() as c:
        await admin.post("/api/v1/registry", json=entry("probed", up2.base_url, api_key="sk-probe-key-1", priority=0))
        r = await admin.post("/api/v1/registry/probed/probe")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["ok"] is True and body["latency_ms"] > 0 and "llama3" in body["models"]
        assert body["entry"]["status"] == "verified" and body["entry"]["latency_ms"] == body["latency_ms"]
        last = up2.requests()[-1]
        assert last["path"] == "/v1/models" and last["authorization"] == "Bearer sk-probe-key-1"
        assert all(req["path"] == "/v1/models" for req in up2.requests())  # no inference
        # the probed models make a model-less entry routable for exactly those models
        assert (await c.post("/v1/chat/completions", json=chat("llama3"))).headers["x-llm-endpoint"] == "probed"
        stored = (await admin.get("/api/v1/registry")).json()["data"][0]
        assert stored["latency_ms"] == body["latency_ms"] and stored["last_probe_at"] is not None
        # a successful probe never overrides IGNORED
        await admin.post("/api/v1/registry/probed/toggle")
        assert (await admin.post("/api/v1/registry/probed/probe")).json()["entry"]["status"] == "IGNORED"


async def test_probe_failure_keeps_status_and_says_why(serve, up1, up2, tmp_path, auth_env):
    gw = await serve(cfg(tmp_path, up1))
    dead = f"http://127.0.0.1:{free_port()}/v1"
    async with gw.client(key=ADMIN_KEY) as admin:
        await admin.post("/api/v1/registry", json=entry("dead", dead, api_key="sk-dead-key-123", priority=0))
        r = await admin.post("/api/v1/registry/dead/probe")
        assert r.status_code == 502
        err = r.json()["error"]
        assert err["code"] == "probe_failed" and "connection failed" in err["message"]
        assert "sk-dead-key-123" not in r.text
        e = (await admin.get("/api/v1/registry")).json()["data"][0]
        assert e["status"] == "FOUND" and e["latency_ms"] is None and "connection failed" in e["last_error"]
        up2.faults({"status": 401, "times": 1, "path": "/v1/models"})
        await admin.post("/api/v1/registry", json=entry("denied", up2.base_url, priority=0))
        await admin.post("/api/v1/registry/denied/toggle")
        r = await admin.post("/api/v1/registry/denied/probe")
        assert r.status_code == 502 and "HTTP 401" in r.json()["error"]["message"]
        e = next(x for x in (await admin.get("/api/v1/registry")).json()["data"] if x["id"] == "denied")
        assert e["status"] == "verified"


async def test_a_stored_entry_with_an_unusable_url_probes_to_a_json_502(serve, up1, tmp_path, auth_env):
    """An entry recorded before base_url was checked for control characters (or imported) fails its probe
    in the error shape, never as a plain-text 500."""
    from actors.llm_gateway import RegistryBoard

    gw = await serve(cfg(tmp_path, up1))
    fields = {"id": "crlf", "name": "crlf", "base_url": "http://127.0.0.1:9/v1\r\nX-Injected: 1", "provider": "vllm"}
    assert (await state.call(gw.gateway.handles.registry, RegistryBoard.add, fields))["ok"]
    async with gw.client(key=ADMIN_KEY) as admin:
        r = await admin.post("/api/v1/registry/crlf/probe")
        assert r.status_code == 502 and r.headers["content-type"].startswith("application/json")
        assert r.json()["error"]["code"] == "probe_failed" and "X-Injected" not in r.text


async def test_scan_adds_discovered_once(serve, up1, up2, tmp_path, auth_env):
    silent = free_port()
    gw = await serve(
        cfg(
            tmp_path,
            up1,
            registry={"scan_ports": [{"provider": "vllm", "port": up2.port}, {"provider": "ollama", "port": silent}]},
        )
    )
    async with gw.client(key=ADMIN_KEY) as admin, gw.client() as c:
        r = await admin.post("/api/v1/registry/scan")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["total"] == 1 and body["added"] == 1
        assert body["scanned"] == [f"127.0.0.1:{up2.port}", f"127.0.0.1:{silent}"]
        cand = body["candidates"][0]
        assert cand["id"] == f"local-vllm-{up2.port}" and cand["base_url"] == up2.base_url
        assert cand["status"] == "DISCOVERED" and "llama3" in cand["models"]
        again = (await admin.post("/api/v1/registry/scan")).json()
        assert again["added"] == 0 and again["candidates"][0]["added"] is False
        listed = (await admin.get("/api/v1/registry")).json()
        assert listed["total"] == 1 and listed["data"][0]["provider"] == "vllm"
        assert (await c.post("/v1/chat/completions", json=chat("llama3"))).status_code == 404  # not verified yet
        await admin.post(f"/api/v1/registry/{cand['id']}/toggle")
        assert (await c.post("/v1/chat/completions", json=chat("llama3"))).status_code == 200


async def test_default_scan_ports_are_the_spec_four(tmp_path):
    from deployments.llm_gateway.config import GatewayConfig

    ports = [(t.provider, t.port, t.models_path()) for t in GatewayConfig().registry.scan_ports]
    assert ports == [
        ("ollama", 11434, "/api/tags"),
        ("lmstudio", 1234, "/v1/models"),
        ("llamacpp", 8080, "/v1/models"),
        ("vllm", 8001, "/v1/models"),
    ]


async def test_postgres_backed_registry(serve, up1, up2, tmp_path, auth_env, postgres_dsn, monkeypatch):

    name = "pg-" + uuid.uuid4().hex[:10]
    monkeypatch.setenv("LLM_GW_TEST_DSN", postgres_dsn)
    config = cfg(tmp_path, up1, server={"storage": {"type": "postgres", "dsn_env": "LLM_GW_TEST_DSN"}})
    gw = await serve(config)
    try:
        async with gw.client(key=ADMIN_KEY) as admin:
            r = await admin.post(
                "/api/v1/registry",
                json=entry(name, up2.base_url, api_key="sk-pg-secret-77", models=["pgm"], priority=2),
            )
            assert r.status_code == 201, r.text
            await admin.post(f"/api/v1/registry/{name}/toggle")
        recorded = registry_record(postgres_dsn)
        assert recorded[name]["status"] == "verified" and recorded[name]["priority"] == 2
        assert recorded[name]["api_key_enc"] and "sk-pg-secret-77" not in json.dumps(recorded)
        state.reset_local_state()
        gw2 = await serve(config)
        async with gw2.client() as c, gw2.client(key=ADMIN_KEY) as admin:
            mine = [e for e in (await admin.get("/api/v1/registry")).json()["data"] if e["id"] == name]
            assert mine and mine[0]["status"] == "verified"
            r = await c.post("/v1/chat/completions", json=chat("pgm"))
            assert r.status_code == 200 and r.headers["x-llm-endpoint"] == name
            assert (await admin.delete(f"/api/v1/registry/{name}")).status_code == 200
        assert name not in registry_record(postgres_dsn)
    finally:
        state.reset_local_state()


def registry_record(dsn: str) -> dict[str, dict]:
    """The registry's entries as its durable record in PostgreSQL holds them (snapshot, then operations)."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT snapshot, snapshot_seq FROM rayfleet_durable_streams WHERE stream = 'llm_gateway/registry'"
        ).fetchone()
        ops = conn.execute(
            "SELECT op FROM rayfleet_durable_records WHERE stream = 'llm_gateway/registry' AND seq > %s ORDER BY seq",
            (row[1],),
        ).fetchall()
    entries = json.loads(row[0]) if row[0] else {}
    for (op,) in ops:
        change = json.loads(op)
        if change["op"] == "put":
            entries[change["entry"]["id"]] = change["entry"]
        elif change["op"] == "remove":
            entries.pop(change["id"], None)
        else:
            entries.update({e["id"]: e for e in change["entries"]})
    return entries


async def test_store_down_is_503_and_inference_still_served(serve, up1, tmp_path, auth_env, monkeypatch):
    monkeypatch.setenv("LLM_GW_DOWN_DSN", f"postgresql://postgres@127.0.0.1:{free_port()}/test")
    config = cfg(tmp_path, up1, server={"storage": {"type": "postgres", "dsn_env": "LLM_GW_DOWN_DSN"}})
    gw = await serve(config)
    async with gw.client(key=ADMIN_KEY) as admin, gw.client() as c:
        r = await admin.post("/api/v1/registry", json=entry("x", up1.base_url, priority=0))
        assert r.status_code == 503 and r.json()["error"]["code"] == "registry_unavailable"
        assert (await admin.get("/api/v1/registry")).status_code == 503
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
    assert os.environ["LLM_GW_DOWN_DSN"] not in r.text
