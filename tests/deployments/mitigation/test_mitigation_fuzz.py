"""Schema-driven fuzzing of a node's API and of the orchestrator: no 5xx, every answer matches its OpenAPI.

The fleet runs real HAProxy nodes behind in-process stand-ins for the actors, as in conftest. schemathesis
serves every request (and the app's lifespan) in one event loop of its own, a shared portal thread, so the
fleet is started and shut down in that loop too: its heartbeats and node calls live where the requests run.
Every operation runs in-process, so none is skipped.
"""

from __future__ import annotations

from schemathesis.python import asgi

from tests.deployments.mitigation.conftest import HEADERS, Fleet, fleet_settings
from tests.fuzzing import fuzz_asgi


def test_no_generated_request_breaks_a_node_or_the_orchestrator(origin: str):
    fleet = Fleet(fleet_settings(origin, initial_nodes=1))
    portal = asgi._get_portal()  # the loop schemathesis sends its requests through
    portal.call(fleet.handle.ensure_started.remote)
    try:
        # the node first: the orchestrator's generated scale_down may drain node-1
        node = fuzz_asgi(fleet.app, "/nodes/node-1/openapi.json", headers=HEADERS, max_examples=40)
        orchestrator = fuzz_asgi(fleet.app, "/openapi.json", headers=HEADERS, max_examples=40)
    finally:
        portal.call(fleet.fleet.shutdown)  # every node's HAProxy stops here, whatever happened
    assert fleet.fleet.nodes == {}
    assert {"POST /api/v1/rules", "POST /api/v1/blacklist", "GET /metrics"} <= set(node.operations)
    assert {"POST /api/v1/policy", "POST /api/v1/scale", "DELETE /api/v1/rules/{rule_id}"} <= set(
        orchestrator.operations
    )
    assert node.requests >= 150 and orchestrator.requests >= 200
    assert node.failures == {}
    assert orchestrator.failures == {}
