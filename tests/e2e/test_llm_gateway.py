"""Tier 3: the LLM gateway deployed by `rayfleet up`, driven through Serve on /llm.

Two upstream double processes stand in for the providers. Their ports are chosen when
this module is collected (before the session's cluster starts) and handed to the
replicas through the config's environment overrides (``LLM_GATEWAY__ENDPOINTS__...``),
exactly as an operator would override the YAML.
"""

from __future__ import annotations

import csv
import json
import os
import time

import httpx
import openai
import pytest

from tests.conftest import DATA, free_port
from tests.deployments.llm_gateway.conftest import Double
from tests.e2e.conftest import needs_app
from tests.polling import eventually_sync

_PORTS = (free_port(), free_port())
for _i, _port in enumerate(_PORTS):
    os.environ.setdefault(f"LLM_GATEWAY__ENDPOINTS__E2E{_i}__BASE_URL", f"http://127.0.0.1:{_port}/v1")
    os.environ.setdefault(f"LLM_GATEWAY__ENDPOINTS__E2E{_i}__MODELS", '["e2e-model"]')
os.environ.setdefault("LLM_GATEWAY__ROTATION__FAILOVER__RETRY_DELAY", '"50ms"')
# the direct listener (server.port) binds a free port, not the demo's 8090
_LISTENER_PORT = free_port()
os.environ.setdefault("LLM_GATEWAY__SERVER__PORT", str(_LISTENER_PORT))
# scan a port nothing listens on, not the machine's real well-known ports
os.environ.setdefault("LLM_GATEWAY__REGISTRY__SCAN_PORTS", json.dumps([{"provider": "vllm", "port": free_port()}]))


def _double_on(name: str, port: int) -> Double:
    import socket
    import subprocess
    import sys

    from tests.conftest import ROOT

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.doubles.llm_upstream",
            "--port",
            str(port),
            "--name",
            name,
            "--models",
            "e2e-model",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True

    eventually_sync(listening, timeout=20, ignore=(OSError,), what="the upstream double listening")
    return Double(name, port, proc)


@pytest.fixture(scope="module")
def doubles(cluster):
    needs_app(cluster, "llm_gateway")
    started = [_double_on(f"e2e{i}", port) for i, port in enumerate(_PORTS)]
    yield started
    for d in started:
        d.stop()


@pytest.fixture
def keys(cluster_secrets):
    return cluster_secrets["LLM_PROXY_API_KEYS"].split(",")[0], cluster_secrets["LLM_PROXY_ADMIN_KEYS"].split(",")[0]


def test_every_route_is_served(serve_url, doubles, keys):
    admin = {"Authorization": f"Bearer {keys[1]}"}
    with open(DATA / "routes.tsv") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t") if r and r[0] == "llm_gateway"]
    assert rows
    import uuid

    entry = "e2e-routes-" + uuid.uuid4().hex[:8]
    missing = []
    with httpx.Client(base_url=serve_url + "/llm", headers=admin, timeout=30, trust_env=False) as c:
        for _, method, path in rows:  # routes.tsv adds the registry entry before its {id} routes use it
            ident = entry if "/registry/" in path else "e2e0"
            r = c.request(
                method,
                path.replace("{id}", ident),
                json={
                    "priority": 1,
                    "name": entry,
                    "base_url": "http://127.0.0.1:1/v1",
                    "provider": "openai",
                    "models": "m",
                },
            )
            if r.status_code in (404, 405):
                missing.append((method, path, r.status_code))
        c.delete(f"/api/v1/registry/{entry}")
    assert not missing, f"routes not served: {missing}"


def test_openai_sdk_streaming_and_failover(serve_url, doubles, keys):
    client = openai.OpenAI(base_url=serve_url + "/llm/v1", api_key=keys[0], max_retries=0)
    out = client.chat.completions.create(model="e2e-model", messages=[{"role": "user", "content": "hi"}])
    assert out.choices[0].message.content.startswith("[e2e")
    text = "".join(
        c.choices[0].delta.content or ""
        for c in client.chat.completions.create(
            model="e2e-model", messages=[{"role": "user", "content": "stream"}], stream=True
        )
        if c.choices
    )
    assert "Hello from the upstream double" in text
    models = [m.id for m in client.models.list()]
    assert "e2e-model" in models and "fast" in models and "default" in models
    doubles[0].stop()
    served_by = set()
    for _ in range(8):
        raw = client.chat.completions.with_raw_response.create(
            model="e2e-model",
            messages=[{"role": "user", "content": "after stop"}],
            extra_headers={"Cache-Control": "no-cache"},
        )
        served_by.add(raw.headers["x-llm-endpoint"])
        assert raw.parse().choices[0].message.content.startswith("[e2e1]")
    assert served_by == {"e2e1"}


def test_metrics_cluster_wide_and_admin_only(serve_url, doubles, keys):
    with httpx.Client(base_url=serve_url + "/llm", timeout=30, trust_env=False) as c:
        assert c.get("/metrics", headers={"Authorization": f"Bearer {keys[0]}"}).status_code == 403
        assert c.get("/metrics").status_code == 401
        r = c.get("/metrics", headers={"Authorization": f"Bearer {keys[1]}"})
        assert r.status_code == 200
        assert "llm_proxy_requests_total" in r.text and "llm_proxy_circuit_open" in r.text
        health = c.get("/health").json()
        assert {e["name"] for e in health["endpoints"]} >= {"e2e0", "e2e1"}
        reset = c.post("/api/v1/circuit-breaker/e2e0/reset", headers={"Authorization": f"Bearer {keys[1]}"})
        assert reset.status_code == 200 and reset.json()["circuit_state"] == "CLOSED"
        assert (
            json.loads(c.get("/api/v1/metrics/latency", headers={"Authorization": f"Bearer {keys[1]}"}).text)["rings"]
            is not None
        )


def test_registry_round_trip(serve_url, doubles, keys):
    """Add, list, toggle to Live (it then serves inference on both replicas), toggle off, delete."""
    import uuid

    name = "e2e-reg-" + uuid.uuid4().hex[:8]
    admin = {"Authorization": f"Bearer {keys[1]}"}
    infer = {"Authorization": f"Bearer {keys[0]}"}
    body = {"model": "e2e-model", "messages": [{"role": "user", "content": "registry"}]}
    with httpx.Client(base_url=serve_url + "/llm", timeout=30, trust_env=False) as c:
        r = c.post(
            "/api/v1/registry",
            headers=admin,
            json={
                "name": name,
                "base_url": doubles[1].base_url,
                "provider": "openai_compat",
                "priority": -5,
                "api_key": "sk-e2e-registry-secret",
                "models": "e2e-model",
            },
        )
        assert r.status_code == 201, r.text
        assert r.json()["status"] == "FOUND"
        assert c.post("/api/v1/registry", headers=infer, json={}).status_code == 403
        try:
            listed = c.get("/api/v1/registry", headers=admin)
            assert name in [e["id"] for e in listed.json()["data"]] and "sk-e2e-registry-secret" not in listed.text
            assert c.post(f"/api/v1/registry/{name}/toggle", headers=admin).json()["status"] == "verified"

            def served_by() -> str:
                r = c.post("/v1/chat/completions", headers={**infer, "Cache-Control": "no-cache"}, json=body)
                assert r.status_code == 200, r.text
                return str(r.headers["x-llm-endpoint"])

            eventually_sync(
                lambda: served_by() == name,
                timeout=15,
                interval=0.2,
                what="the verified registry entry (priority -5) receiving traffic",
            )
            assert c.post(f"/api/v1/registry/{name}/toggle", headers=admin).json()["status"] == "IGNORED"
            # every replica drops it on its next registry refresh (refresh_interval 1 s);
            # then six requests in a row are served elsewhere
            eventually_sync(
                lambda: all(served_by() != name for _ in range(6)),
                timeout=20,
                interval=0.2,
                what="six requests in a row served elsewhere than the IGNORED registry entry",
            )
        finally:
            assert c.delete(f"/api/v1/registry/{name}", headers=admin).status_code == 200
        assert name not in [e["id"] for e in c.get("/api/v1/registry", headers=admin).json()["data"]]
        assert c.post(f"/api/v1/registry/{name}/toggle", headers=admin).status_code == 404


def _series_sum(text: str, family: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(family + "{") or line.startswith(family + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_direct_listener_shares_keys_metrics_and_budget(serve_url, doubles, keys):
    """Every replica's direct listener on server.port serves the same app with the same keys; what it counts
    and spends is visible cluster-wide through Serve's /llm/metrics."""
    listener_url = f"http://127.0.0.1:{int(os.environ['LLM_GATEWAY__SERVER__PORT'])}"
    infer = {"Authorization": f"Bearer {keys[0]}", "Cache-Control": "no-cache"}
    admin = {"Authorization": f"Bearer {keys[1]}"}
    body = {"model": "e2e-model", "messages": [{"role": "user", "content": "direct listener"}]}
    with httpx.Client(timeout=30, trust_env=False) as c:

        def listener() -> dict:
            return dict(c.get(serve_url + "/llm/health").json()["listener"])

        eventually_sync(lambda: listener()["state"] == "serving", timeout=30, interval=0.5, what="the listener serving")
        view = listener()
        assert view == {"enabled": True, "url": listener_url, "state": "serving", "error": None}
        assert c.get(listener_url + "/health").json()["listener"]["url"] == listener_url

        assert c.post(listener_url + "/v1/chat/completions", json=body).status_code == 401
        assert c.post(listener_url + "/v1/chat/completions", json=body, headers=admin).status_code == 403
        before = c.get(serve_url + "/llm/metrics", headers=admin).text
        requests_before = _series_sum(before, "llm_proxy_requests_total")
        spent_before = _series_sum(before, "llm_proxy_budget_consumed_usd")
        for _ in range(3):
            r = c.post(listener_url + "/v1/chat/completions", json=body, headers=infer)
            assert r.status_code == 200, r.text
            assert r.json()["choices"][0]["message"]["content"].startswith("[e2e")
            assert r.headers["x-rayfleet-replica"]  # answered by a Serve replica, without the proxy hop
        models = c.get(listener_url + "/v1/models", headers=infer).json()
        assert "e2e-model" in [m["id"] for m in models["data"]]
        openai_client = openai.OpenAI(base_url=listener_url + "/v1", api_key=keys[0], max_retries=0)
        text = "".join(
            ch.choices[0].delta.content or ""
            for ch in openai_client.chat.completions.create(
                model="e2e-model",
                messages=[{"role": "user", "content": "stream direct"}],
                stream=True,
                extra_headers={"Cache-Control": "no-cache"},
            )
            if ch.choices
        )
        assert "Hello from the upstream double" in text

        def counted() -> bool:  # replicas flush their counters and spend in batches
            after = c.get(serve_url + "/llm/metrics", headers=admin).text
            requests_after = _series_sum(after, "llm_proxy_requests_total")
            spent_after = _series_sum(after, "llm_proxy_budget_consumed_usd")
            assert requests_after >= requests_before + 4, (requests_before, requests_after)
            assert spent_after > spent_before, (spent_before, spent_after)
            return True

        eventually_sync(counted, timeout=20, interval=0.5, ignore=(AssertionError,), what="the cluster-wide metrics")


RESTART_ACTOR = """
import json, sys, time, ray
ray.init(namespace="rayfleet", logging_level="ERROR")
name, method, action = sys.argv[1], sys.argv[2], sys.argv[3]
from ray._private.state import actors
def restarts():
    live = [a for a in actors().values() if a["Name"] == name and a["State"] != "DEAD"]
    return (live[0]["NumRestarts"], live[0]["State"]) if live else (-1, "DEAD")
handle = ray.get_actor(name)
before = ray.get(getattr(handle, method).remote()) if method != "-" else None
deadline, after = time.monotonic() + 60, None
if action == "kill":
    count = restarts()[0]
    ray.kill(handle, no_restart=False)  # asynchronous: wait until the restarted actor is alive
    while time.monotonic() < deadline:
        done, state = restarts()
        if done > count and state == "ALIVE":
            break
        time.sleep(0.2)
while time.monotonic() < deadline:
    try:
        after = ray.get(getattr(ray.get_actor(name), method).remote(), timeout=10) if method != "-" else "alive"
        break
    except Exception:
        time.sleep(0.5)
print(json.dumps({"before": before, "after": after}, default=str))
"""


def _restart_actor(cluster, name: str, method: str = "-", kill: bool = True) -> dict:
    """Kill the named actor with restart allowed (as a node death does); its state before and after.

    With `kill=False` it only reads the state (``after`` is the current one).
    """
    import subprocess
    import sys

    state = json.loads((cluster.state_dir / "rayfleet.json").read_text())
    env = {**os.environ, "RAY_ADDRESS": state["ray_address"], "RAY_AUTH_MODE": "token"}
    env["RAY_AUTH_TOKEN_PATH"] = state["ray_auth_token_path"]
    out = subprocess.run(
        [sys.executable, "-c", RESTART_ACTOR, name, method, "kill" if kill else "read"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_registry_entries_survive_a_restart_of_the_registry_actor(cluster, serve_url, doubles, keys):
    """The registry actor writes every change through to the store and reloads it after a restart."""
    import uuid

    name = "e2e-keep-" + uuid.uuid4().hex[:8]
    admin = {"Authorization": f"Bearer {keys[1]}"}
    with httpx.Client(base_url=serve_url + "/llm", timeout=30, trust_env=False) as c:
        entry = {"name": name, "base_url": doubles[1].base_url, "provider": "openai_compat", "priority": 5}
        assert c.post("/api/v1/registry", headers=admin, json=entry).status_code == 201
        try:
            _restart_actor(cluster, "llm_gateway.registry")

            def listed() -> list[str]:
                r = c.get("/api/v1/registry", headers=admin)
                return [e["id"] for e in r.json()["data"]] if r.status_code == 200 else []

            eventually_sync(
                lambda: name in listed(), timeout=30, interval=0.5, what="the entry listed after the actor's restart"
            )
        finally:
            c.delete(f"/api/v1/registry/{name}", headers=admin)


def test_the_budget_ledger_keeps_todays_spend_across_a_restart(cluster, serve_url, doubles, keys):
    """The ledger keeps no file: replicas see its new epoch and restore today's spend from the store."""
    infer = {"Authorization": f"Bearer {keys[0]}", "Cache-Control": "no-cache"}
    body = {"model": "e2e-model", "messages": [{"role": "user", "content": "spend"}]}
    with httpx.Client(base_url=serve_url + "/llm", timeout=30, trust_env=False) as c:
        for _ in range(3):
            assert c.post("/v1/chat/completions", headers=infer, json=body).status_code == 200

    def ledger() -> dict:
        return dict(_restart_actor(cluster, "llm_gateway.budget", "state", kill=False)["after"])

    # replicas settle their spend with the ledger in batches
    eventually_sync(lambda: ledger()["spent"] > 0, timeout=30, interval=0.5, what="the spend settled with the ledger")
    seen = _restart_actor(cluster, "llm_gateway.budget", "state")
    assert seen["before"]["spent"] > 0, seen
    assert seen["after"]["epoch"] != seen["before"]["epoch"], seen
    floor = seen["before"]["spent"] * (1 - 1e-9)  # the store sums the same costs in another order
    if seen["after"]["spent"] < floor:
        eventually_sync(
            lambda: ledger()["spent"] >= floor, timeout=30, interval=0.5, what=f"today's spend restored ({seen})"
        )


def test_registry_ui_and_a_session_through_serve_and_the_listener(serve_url, doubles, keys):
    """The UI and the session cookie work under Serve's /llm prefix and on the direct listener: the
    cookie's Path is the gateway's, and a logout on one replica holds on all of them."""
    listener_url = f"http://127.0.0.1:{int(os.environ['LLM_GATEWAY__SERVER__PORT'])}"
    eventually_sync(
        lambda: httpx.get(serve_url + "/llm/health", trust_env=False).json()["listener"]["state"] == "serving",
        timeout=30,
        interval=0.5,
        what="the listener serving",
    )
    for base, path in ((serve_url + "/llm", "/llm/"), (listener_url, "/")):
        with httpx.Client(base_url=base, timeout=30, trust_env=False) as c:
            page = c.get("/ui/registry")
            assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
            assert c.get("/ui/registry.js").status_code == 200
            signed = c.post("/auth/key", json={"admin_key": keys[1]})
            assert signed.status_code == 200 and f"path={path}" in signed.headers["set-cookie"].lower()
            csrf = {"X-CSRF-Token": signed.json()["csrf_token"]}
            name = "e2e-ui-" + str(int(time.time() * 1000))
            entry = {"name": name, "base_url": "http://127.0.0.1:1/v1", "provider": "openai", "priority": 1}
            assert c.post("/api/v1/registry", json=entry).status_code == 403  # cookie without CSRF
            assert c.post("/api/v1/registry", json=entry, headers=csrf).status_code == 201
            assert c.delete(f"/api/v1/registry/{name}", headers=csrf).status_code == 200
            token = c.cookies.get("llm_gateway_session")
            assert c.post("/auth/logout", headers=csrf).json()["revoked"] is True
        for _ in range(6):  # whichever replica answers, the session is revoked
            r = httpx.get(base + "/api/v1/registry", cookies={"llm_gateway_session": token}, trust_env=False)
            assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_session"
