"""Property-based fuzzing of the gateway's OpenAPI with schemathesis, against the upstream double.

Every documented operation gets generated requests (valid and invalid); a response fails
the test when it is a 5xx, when its content type or body breaks the documented schema.
Inference routes carry an inference key, the control plane an admin key. Left out: the
panic switch (it turns every later inference answer into a documented 503), the registry
scan and probe (they reach out to ports and answer 502 when nothing listens, by design).
Bounded: a fixed number of examples per operation, no deadline per example.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import content_type_conformance, not_a_server_error, response_schema_conformance

from deployments.llm_gateway.app import create_app
from deployments.llm_gateway.config import GatewayConfig
from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, INFER_KEY, base_config
from tests.polling import eventually_sync

SKIPPED = ("/admin/panic", "/api/v1/registry/scan", "/api/v1/registry/{id}/probe")


@pytest.fixture(scope="module")
def gateway_url(up1: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    mp = pytest.MonkeyPatch()
    mp.setenv("LLM_PROXY_API_KEYS", INFER_KEY)
    mp.setenv("LLM_PROXY_ADMIN_KEYS", ADMIN_KEY)
    mp.delenv("LLM_PROXY_DEV_MODE", raising=False)
    cfg = base_config(tmp_path_factory.mktemp("fuzz"), {"a": {"base_url": up1.base_url, "models": ["m"]}})
    app = create_app(GatewayConfig.model_validate(cfg))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    eventually_sync(lambda: server.started, what="uvicorn started")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    mp.undo()


CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


def _fuzz(operation: Any, gateway_url: str, mode: GenerationMode) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    def run(case: Any) -> None:
        key = INFER_KEY if case.path.startswith("/v1/") else ADMIN_KEY
        case.call_and_validate(
            base_url=gateway_url, headers={"Authorization": f"Bearer {key}"}, checks=CHECKS, timeout=10
        )

    run()


def test_no_5xx_and_no_schema_breaking_answer(gateway_url: str) -> None:
    schema = schemathesis.openapi.from_url(gateway_url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    fuzzed = [op for op in operations if op.path not in SKIPPED]
    assert len(fuzzed) >= 15
    for operation in fuzzed:
        _fuzz(operation, gateway_url, GenerationMode.POSITIVE)
        try:
            _fuzz(operation, gateway_url, GenerationMode.NEGATIVE)
        except Unsatisfiable:
            pass  # nothing to make invalid: no body, query or path parameter
