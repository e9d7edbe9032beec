"""Fixtures: upstream double processes and gateways served by uvicorn on loopback.

The gateway under test is the real app (``create_app``) served over a real socket in
the test's event loop, with the in-process stand-ins of its actors; the upstreams are
separate processes of the upstream double.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from actors.llm_gateway.prober import EndpointProber
from deployments.llm_gateway.app import create_app
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.state import GatewayState, Handles
from rayfleet.state import call
from tests.conftest import ROOT, free_port
from tests.doubles.oidc_issuer import OidcIssuer
from tests.polling import NotYet, eventually, eventually_sync

INFER_KEY = "sk-test-inference-0123456789"
ADMIN_KEY = "sk-test-admin-0123456789"
CLIENT_ENV = "TEST_GW_OIDC_CLIENT_ID"
SECRET_ENV = "TEST_GW_OIDC_CLIENT_SECRET"


class Double:
    """A running upstream double process."""

    def __init__(self, name: str, port: int, proc: subprocess.Popen[bytes]) -> None:
        self.name = name
        self.port = port
        self.proc = proc
        self.url = f"http://127.0.0.1:{port}"
        self.base_url = self.url + "/v1"

    def faults(self, *rules: dict[str, Any]) -> None:
        httpx.post(self.url + "/_double/faults", json={"rules": list(rules)}, trust_env=False).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        return httpx.get(self.url + "/_double/requests", trust_env=False).json()["requests"]

    def reset(self) -> None:
        httpx.delete(self.url + "/_double/faults", trust_env=False)
        httpx.delete(self.url + "/_double/requests", trust_env=False)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_double(name: str, keys: str = "", latency_ms: float = 0.0, models: str = "") -> Double:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "tests.doubles.llm_upstream",
        "--port",
        str(port),
        "--name",
        name,
        "--latency-ms",
        str(latency_ms),
    ]
    if keys:
        cmd += ["--keys", keys]
    if models:
        cmd += ["--models", models]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def listening() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"upstream double exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True

    try:
        eventually_sync(listening, timeout=20, what=f"upstream double {name} listening", ignore=(OSError,))
    except NotYet:
        proc.kill()
        raise
    return Double(name, port, proc)


@pytest.fixture(scope="session")
def up1() -> Any:
    double = start_double("up1")
    yield double
    double.stop()


@pytest.fixture(scope="session")
def up2() -> Any:
    double = start_double("up2")
    yield double
    double.stop()


@pytest.fixture(scope="session")
def keyed() -> Any:
    double = start_double("keyed", keys="uk-a,uk-b")
    yield double
    double.stop()


@pytest.fixture(scope="session")
def cloud() -> Any:
    """A keyed double serving cloud model names (Azure deployments, Gemini models)."""
    double = start_double("cloud", keys="ck-1", models="gpt-4o,gemini-2.0-flash,text-embedding-3-small")
    yield double
    double.stop()


BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
AWS_KEY = "AKIDTESTKEY:test/secret+key"
AWS_TEMPORARY_KEY = "ASIATESTKEY:temp-secret:session-token"


@pytest.fixture(scope="session")
def aws() -> Any:
    """A double checking AWS SigV4 for a long-term and a temporary key (Bedrock)."""
    double = start_double("aws", keys=f"{AWS_KEY},{AWS_TEMPORARY_KEY}", models=BEDROCK_MODEL)
    yield double
    double.stop()


@pytest.fixture(autouse=True)
def _reset_doubles(request: pytest.FixtureRequest) -> None:
    for name in ("up1", "up2", "keyed", "cloud", "aws"):
        if name in request.fixturenames:
            request.getfixturevalue(name).reset()


@pytest.fixture
def auth_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_PROXY_API_KEYS", INFER_KEY + ",sk-test-second-0123456789")
    monkeypatch.setenv("LLM_PROXY_ADMIN_KEYS", ADMIN_KEY)
    monkeypatch.delenv("LLM_PROXY_DEV_MODE", raising=False)


@pytest.fixture
async def issuer(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[OidcIssuer]:
    """A real OIDC issuer on loopback; its client id and secret are in the environment."""
    idp = await OidcIssuer(client_secret="s3cret-client").start()
    monkeypatch.setenv(CLIENT_ENV, idp.client_id)
    monkeypatch.setenv(SECRET_ENV, idp.client_secret)
    monkeypatch.delenv("LLM_PROXY_SESSION_KEY", raising=False)
    yield idp
    await idp.stop()


def identity_config(issuer: OidcIssuer, **identity: Any) -> dict[str, Any]:
    provider = {"name": "local", "client_id_env": CLIENT_ENV, "client_secret_env": SECRET_ENV, "issuer": issuer.url}
    return {
        "enabled": True,
        "providers": [provider],
        "role_mappings": {"Ada@Example.TEST": "admin", "vic@example.test": "viewer"},
        "session_ttl": 600,
        **identity,
    }


def base_config(tmp_path: Path, endpoints: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "data_dir": str(tmp_path),
        "discovery": False,
        "endpoints": endpoints,
        "rotation": {"failover": {"retry_delay": "10ms"}},
        "rate_limiting": {"requests_per_minute": 100000},
        "caching": {"enabled": False},
        "circuit_breaker": {"failure_threshold": 3, "recovery_timeout": 60},
        "observability": {"tracing": {"console_exporter": False}},
        "health_check": {"enabled": False},  # its probes would show in the doubles' request logs; on in its tests
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    return cfg


def gateway_state(config: GatewayConfig, replicas: int = 1, overrides: dict[str, Any] | None = None) -> GatewayState:
    """A replica's state with some of its actor handles (``Handles`` fields) or its ``clock`` replaced."""
    handles = dict(overrides or {})
    clock = handles.pop("clock", time.time)
    return GatewayState.from_ray(
        config, replicas=replicas, handles=replace(Handles.from_ray(config), **handles), clock=clock
    )


class Served:
    def __init__(self, app: Any, url: str) -> None:
        self.app = app
        self.url = url
        self.gateway: GatewayState = app.state.component

    def client(self, key: str | None = INFER_KEY, **kw: Any) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=30.0, trust_env=False, **kw)


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Any]]:
    servers: list[tuple[uvicorn.Server, asyncio.Task[Any]]] = []
    apps: list[Any] = []

    async def start(cfg: dict[str, Any], replicas: int = 1, state: dict[str, Any] | None = None) -> Served:
        config = GatewayConfig.model_validate(cfg)
        app = create_app(config, gateway_state(config, replicas, state))
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
        task = asyncio.get_running_loop().create_task(server.serve())
        servers.append((server, task))
        apps.append(app)
        await eventually(lambda: server.started, interval=0.02, what="the gateway serving")
        return Served(app, f"http://127.0.0.1:{port}")

    yield start
    for server, task in servers:
        server.should_exit = True
    for server, task in servers:
        try:
            await asyncio.wait_for(task, 10)
        except (TimeoutError, Exception):
            task.cancel()
    for app in apps:  # a prober left running would probe the session's doubles during the next tests
        health = app.state.component.views.health
        if health is not None:
            await call(health.handle, EndpointProber.stop)


def chat(model: str = "gpt-4o-mini", content: str = "hello there", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": content}], **extra}


async def flush(served: Served) -> None:
    """Push this replica's batched state (budget, leases, records, cache) to its stores."""
    gw = served.gateway
    await gw.views.budget.flush()
    await gw.views.leases.flush()
    await gw.stores.records.flush()
    if gw.stores.cache is not None:
        await gw.stores.cache.flush()
