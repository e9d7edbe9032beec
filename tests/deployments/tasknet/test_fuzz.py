"""Schema-driven fuzzing of a node's API: no 5xx, and every answer matches its own OpenAPI."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from deployments.tasknet.app import create_app
from rayfleet.state import local_state, reset_local_state
from tests.deployments.tasknet.conftest import TOKENS, make_config
from tests.fuzzing import fuzz_asgi

# The WebSocket feed is not an HTTP operation; the agent and evolution need an LLM (tested with the double).
SKIP = ("POST /agent/prompt", "POST /evolution/generate")


def test_no_generated_request_breaks_a_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    with local_state():
        reset_local_state()
        app = create_app(make_config(tmp_path))
        with TestClient(app) as client:
            assert client.get("/whoami").status_code == 200  # the network is up in the client's loop
            report = fuzz_asgi(app, "/openapi.json", headers={"X-Node-Token": TOKENS["n1"]}, max_examples=4, skip=SKIP)
            client.portal.call(app.state.component.network.stop)
        reset_local_state()
    assert "POST /tasks" in report.operations and report.requests >= 150
    assert report.failures == {}
