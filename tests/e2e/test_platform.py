"""The platform through a real cluster: metrics stay cluster-wide across replicas."""

from __future__ import annotations

import time

from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import needs_app


def healthz_count(body: str) -> float:
    for family in text_string_to_metric_families(body):
        if family.name == "ignore_gen_requests":
            return sum(s.value for s in family.samples
                       if s.name == "ignore_gen_requests_total" and s.labels.get("route") == "/healthz"
                       and s.labels.get("status") == "200")
    return 0.0


def test_counters_are_monotonic_whichever_of_two_replicas_answers(cluster, http):
    needs_app(cluster, "ignore_gen")
    before = healthz_count(http.get("/ignore/metrics").text)
    sent, replicas, seen = 0, set(), []
    for _ in range(40):
        for _ in range(3):
            response = http.get("/ignore/healthz")
            assert response.status_code == 200
            replicas.add(response.headers["x-rayfleet-replica"])
            sent += 1
        scrape = http.get("/ignore/metrics")
        replicas.add(scrape.headers["x-rayfleet-replica"])
        seen.append(healthz_count(scrape.text))
    assert len(replicas) >= 2, "the test needs two replicas answering"
    assert seen == sorted(seen), f"a counter went backwards between scrapes: {seen}"
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        final = healthz_count(http.get("/ignore/metrics").text)
        if final - before >= sent:
            break
        time.sleep(0.5)
    assert final - before >= sent, f"expected {sent} new /healthz requests counted, got {final - before}"


def test_health_table_and_replica_header(cluster, http):
    for app in cluster.apps:
        from rayfleet.catalog import COMPONENTS

        comp = COMPONENTS[app]
        response = http.get(comp.route_prefix + comp.health_path)
        assert response.status_code == 200, f"{app}: {response.status_code}"
        assert response.headers.get("x-rayfleet-replica")
