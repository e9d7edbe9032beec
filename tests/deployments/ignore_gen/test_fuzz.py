"""Schema-driven fuzzing of the generator: no 5xx, and every answer matches its own OpenAPI."""

from __future__ import annotations

from deployments.ignore_gen.app import create_app
from deployments.ignore_gen.config import load
from tests.conftest import ROOT
from tests.fuzzing import fuzz_asgi


def test_no_generated_request_breaks_the_generator():
    app = create_app(load(ROOT / "config" / "ignore_gen.yaml"))
    report = fuzz_asgi(app, "/openapi.json", max_examples=40)
    assert "POST /generate" in report.operations and report.requests >= 60
    assert report.failures == {}
