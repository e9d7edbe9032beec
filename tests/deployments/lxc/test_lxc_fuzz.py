"""Schema-driven fuzzing of the whole API (schemathesis) against pve-sim over real SSH.

The app is served by uvicorn on a free loopback port (real HTTP, so the body cap sees
what a client sends, and one long-lived event loop for the SSH pool, as in production);
the checks are `tests.fuzzing.CHECKS`, as in the platform's in-process helper. Every
operation of the OpenAPI document gets generated and example requests, bounded in number.
A run fails on any 5xx, on any status the document does not list, and on any body that
breaks the operation's documented schema.

One exception, by the spec: a command the caller supplies (`/lxc/instances/{id}/exec`,
`.../app/run`) that exits non-zero is the documented 500 `{error, details, output,
return_code}`; there a 500 must be exactly that shape with a non-zero return code, never a crash.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error

from deployments.lxc.app import create_app
from deployments.lxc.config import LxcConfig
from tests.deployments.lxc.simenv import API_KEY, TEMPLATE, SimEnv
from tests.fuzzing import CHECKS
from tests.polling import eventually_sync

USER_COMMANDS = ("/exec", "/app/run")
MAX_EXAMPLES = 3
SHAPE_CHECKS = [check for check in CHECKS if check is not not_a_server_error]


def _document() -> dict[str, Any]:
    """The app's OpenAPI document (building the app opens no connection; the zone here is never dialled)."""
    zone = {"host": "127.0.0.1", "key_file": "/dev/null", "host_key_checking": False}
    config = LxcConfig.model_validate(
        {
            "api_key": API_KEY,
            "regions": {"eu-south-1": {"availability_zones": {"az1": zone}}},
            "instance_sizes": {"small": {"memory": 512, "cpulimit": 1, "storage": "local-lvm:8"}},
        }
    )
    return create_app(config).openapi()


schema = schemathesis.openapi.from_dict(_document())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """pve-sim with a few containers, and the API on a free port in a thread of its own."""
    root = tmp_path_factory.mktemp("lxc-fuzz")
    env = SimEnv(root / "sim")
    app = create_app(env.config(root, api={"host_exec_enabled": False}))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    eventually_sync(lambda: server.started, what="uvicorn started")
    port = server.servers[0].sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base, headers={"X-API-Key": API_KEY}, timeout=60) as client:
        for _ in range(2):
            assert client.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE}).status_code == 200
    yield base
    server.should_exit = True
    thread.join(timeout=30)
    env.stop()


def _user_command_failure(case: schemathesis.Case, response: Any) -> bool:
    """A 500 from a caller-supplied command that really ran and failed (the spec's command-failed row)."""
    if response.status_code != 500 or not case.path.endswith(USER_COMMANDS):
        return False
    body = response.json()
    return (
        set(body) == {"error", "details", "output", "return_code"}
        and body["error"] == "Command execution failed"
        and body["return_code"] != 0
    )


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_server_errors_and_answers_match_the_schema(case: schemathesis.Case, served: str) -> None:
    body = case.body
    count = body.get("count") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(count, int) and count > 2:
        body["count"] = 2  # bounded run: at most two containers per creation (limits are tier 1's job)
    response = case.call(base_url=served, headers={"X-API-Key": API_KEY}, timeout=60)
    checks = SHAPE_CHECKS if _user_command_failure(case, response) else CHECKS
    case.validate_response(response, checks=checks)
