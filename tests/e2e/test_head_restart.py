"""A head node that can restart: with RAYFLEET_GCS_REDIS, the GCS keeps its tables in Redis.

`rayfleet up` (its own cluster, ignore_gen only) with the Redis on loopback and a namespace of
this test's own. Under load on the direct port the GCS process is SIGKILLed; the keeper starts it
again from the same command line. The direct port answers all along, the GCS comes back with
its tables (Serve's application, the named metrics hub and what it counted), and `rayfleet down`
removes the namespace's keys.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import httpx
import pytest
import redis

from rayfleet import upstate
from rayfleet.gcs import parse_storage
from rayfleet.launcher import launch
from tests.conftest import ROOT, require_server
from tests.polling import eventually_sync


def _state(launched) -> dict:
    """`up`'s state file with the head's supervision as it is now (`rayfleet.upstate.fresh`)."""
    return upstate.fresh(launched.state_dir) or {}


def _requests_total(base: str) -> float:
    text = httpx.get(base + "/ignore/metrics", timeout=10, trust_env=False).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("ignore_gen_requests_total{") or line.startswith("ignore_gen_requests_total ")
    )


class DirectLoad(threading.Thread):
    """Sequential requests to the direct port, each recorded with its time and outcome."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.results: list[tuple[float, bool]] = []
        self.why: list[tuple[float, str]] = []  # what each failed request got
        self.stop = threading.Event()

    def run(self) -> None:
        with httpx.Client(timeout=5, trust_env=False) as client:
            while not self.stop.is_set():
                try:
                    status = client.get(self.url).status_code
                    ok, why = status == 200, f"HTTP {status}"
                except httpx.HTTPError as exc:
                    ok, why = False, type(exc).__name__
                if not ok:
                    self.why.append((time.time(), why))
                self.results.append((time.time(), ok))
                time.sleep(0.02)  # paced: a steady trickle, not a benchmark


@pytest.fixture(scope="module")
def ft_cluster(tmp_path_factory):
    require_server("redis", "127.0.0.1", 6379)
    namespace = f"rayfleet-test-{uuid.uuid4().hex[:12]}"
    env = {
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(ROOT),
        "RAYFLEET_GCS_REDIS": "redis://127.0.0.1:6379",
        "RAYFLEET_GCS_NAMESPACE": namespace,
    }
    launched = launch(tmp_path_factory.mktemp("rayfleet-ft"), ["ignore_gen"], env=env, cwd=ROOT, timeout=300)
    storage = parse_storage("127.0.0.1:6379", namespace)
    try:
        yield launched, storage
    finally:
        launched.stop()
        client = redis.Redis(host="127.0.0.1", port=6379)
        leftovers = list(client.scan_iter(match=storage.key_prefix() + "*"))
        if leftovers:
            client.delete(*leftovers)
        client.close()
    assert leftovers == [], "rayfleet down left the cluster's GCS tables in Redis"


def test_the_gcs_tables_are_in_this_clusters_own_namespace(ft_cluster):
    launched, storage = ft_cluster
    head = _state(launched)["head"]
    assert head["fault_tolerant"] and head["namespace"] == storage.namespace
    client = redis.Redis(host="127.0.0.1", port=6379)
    assert any(True for _ in client.scan_iter(match=storage.key_prefix() + "*", count=100))
    client.close()


def test_a_killed_gcs_comes_back_and_the_direct_port_never_stops_answering(ft_cluster):
    launched, _ = ft_cluster
    base, direct = launched.base_url, launched.direct["ignore_gen"].rstrip("/")
    for _ in range(20):
        httpx.get(base + "/ignore/healthz", timeout=10, trust_env=False)
    counted = eventually_sync(lambda: _requests_total(base) >= 20, timeout=30, what="requests counted")
    before = _requests_total(base)
    assert counted
    gcs = _state(launched)["head"]["gcs"]
    assert gcs["state"] == "running" and gcs["restarts"] == 0

    load = DirectLoad(direct + "/healthz")
    load.start()
    time.sleep(1)  # load before the fault (the behaviour under test is what happens across it)
    killed_at = time.time()
    os.kill(gcs["pid"], signal.SIGKILL)

    back = eventually_sync(
        lambda: (h := _state(launched)["head"]["gcs"])["restarts"] == 1 and h["state"] == "running" and h,
        timeout=60,
        what="the GCS restarted",
    )
    assert back["last_exit_reason"] and back["pid"] != gcs["pid"]
    # Serve's application and the named metrics hub answer again through the GCS's restored tables
    eventually_sync(
        lambda: httpx.get(base + "/ignore/healthz", timeout=10, trust_env=False).status_code == 200,
        timeout=60,
        what="Serve route answering",
        ignore=(httpx.HTTPError,),
    )
    assert _requests_total(base) >= before
    time.sleep(1)  # load after the recovery too
    load.stop.set()
    load.join(timeout=10)

    during = [ok for t, ok in load.results if killed_at <= t <= back["since"]]
    print(f"GCS down {back['since'] - killed_at:.2f} s; {len(during)} direct answers in that time")
    failed = [(round(t - killed_at, 2), why) for t, why in load.why]
    assert during, "no direct request fell inside the outage"
    assert failed == [], f"seconds after the kill, and what failed: {failed[:20]}"


def test_the_head_runs_no_log_monitor_when_no_driver_prints_worker_logs(ft_cluster):
    """Ray's log monitor reads every worker's log ten times a second for drivers that print them; `up`
    prints them only with RAYFLEET_LOG_TO_DRIVER, so the head it starts has none (its logs stay on disk)."""
    from pathlib import Path

    launched, _ = ft_cluster
    folder = _state(launched)["head"]["folder"]
    ray_processes, monitors = [], []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if folder in line:
            ray_processes.append(line)
            if "log_monitor.py" in line:
                monitors.append(line)
    assert any("raylet" in line for line in ray_processes), ray_processes[:5]  # the folder names this head's processes
    assert not monitors, monitors
