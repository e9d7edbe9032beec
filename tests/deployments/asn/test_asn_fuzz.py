"""Schema-driven fuzzing of the ASN API: no 5xx, and every answer matches its own OpenAPI."""

from __future__ import annotations

from pathlib import Path

from deployments.asn.app import create_app
from tests.deployments.asn.conftest import API_KEY, tiny_config
from tests.fuzzing import fuzz_asgi


def test_no_generated_request_breaks_the_asn_api(tmp_path: Path, tiny_pkg: Path):
    # the per-IP limit is raised so every generated request reaches its route
    app = create_app(tiny_config(tmp_path, tiny_pkg, limit=100_000))
    assert app.state.component.dataset.wait(30) and app.state.component.dataset.ready
    report = fuzz_asgi(app, "/api/openapi.json", headers={"X-API-Key": API_KEY}, max_examples=30)
    assert "GET /api/v1/ip/{address}" in report.operations and report.requests >= 100
    assert report.failures == {}
