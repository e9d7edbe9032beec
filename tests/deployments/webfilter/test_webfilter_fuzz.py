"""Schema-driven fuzzing of the web filter admin API: no 5xx, and every answer matches its own OpenAPI.

The app runs in-process with its real Squid and dnsmasq (local actor stand-ins), authenticated
with a JWT bearer from a real login.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import replace

from aiohttp import web
from starlette.testclient import TestClient

from deployments.webfilter.app import create_app
from deployments.webfilter.config import AuthConfig
from deployments.webfilter.state import WebfilterState
from rayfleet import state
from tests.deployments.webfilter.conftest import (
    ADMIN_PASSWORD,
    Receiver,
    make_config,
    require_dataplane,
    state_folder,
)
from tests.fuzzing import fuzz_asgi

SKIP = (
    # revokes the fuzzer's own access token: every later request would be a 401
    "POST /api/logout",
    # would subscribe to generated URLs: their host names would go to the machine's resolver, at once and
    # again from the background refresher (subscriptions are tested against a local list server)
    "POST /api/blacklists/subscriptions",
)


async def country_prefixes(request: web.Request) -> web.Response:
    return web.json_response({"country": request.match_info["cc"], "prefixes": ["8.8.4.0/24", "10.0.0.0/8"]})


def test_no_generated_request_breaks_the_webfilter_api():
    require_dataplane()
    root = state_folder()
    # generated bad credentials count against the test client's address: a lockout threshold out of
    # reach keeps the fuzzer's valid token usable (the lockout itself is tested in test_auth.py);
    # the geo import's ASN API is a local stand-in; no import URL counts as public (no network)
    asn = Receiver([("GET", "/asn/api/v1/country/{cc}/prefixes", country_prefixes)])
    config = make_config(root, auth=AuthConfig(lockout_attempts=1_000_000), asn_url=f"http://127.0.0.1:{asn.port}/asn")
    started = time.monotonic()
    with state.local_state():
        state.reset_local_state()
        app = create_app(config, replace(WebfilterState.from_ray(config), public_check=lambda address: False))
        try:
            with TestClient(app) as client:
                try:
                    client.portal.call(asn.start)
                    try:
                        login = client.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})
                        assert login.status_code == 200, login.text
                        headers = {"Authorization": f"Bearer {login.json()['access_token']}"}
                        report = fuzz_asgi(app, "/openapi.json", headers=headers, max_examples=20, skip=SKIP)
                    finally:
                        client.portal.call(asn.stop)
                finally:  # Squid and dnsmasq stop whatever happened
                    client.portal.call(app.state.component.logs.stop.remote)
                    client.portal.call(app.state.component.proxy.stop.remote)
        finally:
            state.reset_local_state()
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"fuzzed {len(report.operations)} operations, {report.requests} requests in {time.monotonic() - started:.1f} s"
    )
    assert report.failures == {}, "\n\n".join(f"{op}: {why}" for op, why in report.failures.items())
    assert "POST /api/ip-blacklist" in report.operations and "GET /api/logs" in report.operations
    # every HTTP operation but logout; operations without parameters get one example each
    assert len(report.operations) >= 70 and report.requests >= 600
