"""Tier 3 on a real two-node Ray cluster, joined the way the README tells users to.

A head and a worker node are started with `ray start` on this machine (loopback
addresses 127.0.0.2 and 127.0.0.3, each with its own resources, temp dir and process
group) with token authentication, and `RAY_ADDRESS=<head>:<port> rayfleet up` joins
them. Then: replicas and their direct listeners run on both nodes; Serve scales
ignore_gen up under direct load and back down; the worker node is killed under load
and requests go on (only the ones in flight on the dead node fail); the named state
actors restart. The nodes are killed at the end whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from rayfleet import nodes, upstate
from rayfleet.launcher import Launched, launch
from tests.conftest import ROOT
from tests.e2e.conftest import status_json
from tests.polling import NotYet, eventually_sync

HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"


def multinode_config(path: Path) -> Path:
    """serve.yaml's ignore_gen, its direct port bound per node, autoscaling quick enough for a test."""
    base = yaml.safe_load((ROOT / "serve.yaml").read_text())
    app = next(a for a in base["applications"] if a["name"] == "ignore_gen")
    app["args"]["direct"] = {"port": app["args"]["direct"]["port"], "host": "node"}
    app["deployments"][0]["autoscaling_config"].update(
        {
            "min_replicas": 2,
            "initial_replicas": 2,
            "max_replicas": 4,
            "target_ongoing_requests": 2,
            "upscale_delay_s": 2,
            "downscale_delay_s": 8,
            "look_back_period_s": 2,
            "metrics_interval_s": 0.5,
        }
    )
    base["applications"] = [app]
    path.write_text(yaml.safe_dump(base))
    return path


class Cluster:
    def __init__(self, head: nodes.Node, worker: nodes.Node, address: str, env: dict[str, str], up: Launched):
        self.head, self.worker, self.address, self.env, self.up = head, worker, address, env, up

    def status(self) -> dict:
        return status_json(self.up.state_dir)

    def placement(self) -> dict:
        """The placement snapshot `rayfleet up` takes when asked (`rayfleet.upstate.fresh`)."""
        state = upstate.fresh(self.up.state_dir) or {}
        return (state.get("serve") or {}).get("ignore_gen", {})

    def driver(self, code: str, timeout: float = 120) -> dict:
        """Run `code` in a fresh Ray driver joined to the cluster (token included); it prints JSON."""
        env = {**os.environ, **self.env, "RAY_ADDRESS": self.address, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
        assert out.returncode == 0, out.stderr[-3000:]
        # Ray's own warnings (e.g. "raylet has lagging heartbeats") can follow the answer on stdout
        answers = [line for line in out.stdout.splitlines() if line.startswith("{")]
        assert answers, out.stdout[-3000:]
        return json.loads(answers[-1])


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[Cluster]:
    # Ray's socket paths live under the node's temp dir: it must be short (AF_UNIX limit)
    root = Path(tempfile.mkdtemp(prefix="rfmn-", dir="/tmp"))
    env = nodes.auth_env(nodes.write_token(root / "auth_token"))
    started: list[nodes.Node] = []
    up: Launched | None = None
    try:
        head, address = nodes.start_node("head", root, node_ip=HEAD_IP, num_cpus=1, resources={"rf_head": 1}, env=env)
        started.append(head)
        worker, _ = nodes.start_node(
            "worker", root, head_address=address, node_ip=WORKER_IP, num_cpus=1, resources={"rf_worker": 1}, env=env
        )
        started.append(worker)
        up_env = {**env, "RAY_ADDRESS": address, "RAYFLEET_HOME": str(ROOT)}
        up = launch(
            root / "state",
            ["ignore_gen"],
            config=str(multinode_config(root / "serve.yaml")),
            env=up_env,
            cwd=ROOT,
            timeout=300,
        )
        yield Cluster(head, worker, address, env, up)
    finally:
        if up is not None:
            up.stop(timeout=90)
        for node in reversed(started):
            node.kill()
        shutil.rmtree(root, ignore_errors=True)


def wait_for(predicate, timeout: float, interval: float = 1.0):
    """`predicate()` once truthy, else its value at the timeout (the caller's assert shows what it saw)."""
    try:
        return eventually_sync(predicate, timeout=timeout, interval=interval)
    except NotYet:
        return predicate()


def test_joining_needs_the_cluster_token_by_value_or_by_file(two_nodes):
    """RAY_AUTH_MODE=token with the token in RAY_AUTH_TOKEN (or a file in RAY_AUTH_TOKEN_PATH) joins; a wrong one does not."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    base.update({"RAY_ADDRESS": two_nodes.address, "RAY_AUTH_MODE": "token"})
    token = Path(two_nodes.env["RAY_AUTH_TOKEN_PATH"]).read_text().strip()
    code = "import ray; ray.init(); print(len(ray.nodes()))"
    for token_value, joins in ((token, True), ("0" * 64, False)):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**base, "RAY_AUTH_TOKEN": token_value},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (out.returncode == 0) is joins, out.stderr[-2000:]
        if joins:
            assert out.stdout.strip().splitlines()[-1] == "2"


def test_replicas_and_direct_listeners_run_on_both_nodes(two_nodes):
    placed = wait_for(lambda: set(two_nodes.placement().get("nodes", [])) == {HEAD_IP, WORKER_IP}, 60)
    assert placed, two_nodes.placement()
    report = two_nodes.status()["components"]["ignore_gen"]
    assert report["health"] == "ok" and report["replicas"] >= 2
    assert sorted(report["direct_urls"]) == sorted(
        f"http://{ip}:{report['direct_url'].rsplit(':', 1)[1]}" for ip in (HEAD_IP, WORKER_IP)
    )
    for url in report["direct_urls"]:
        response = httpx.get(url + "healthz", timeout=10)
        assert response.status_code == 200 and response.headers["x-rayfleet-replica"]


def _load(url: str, clients: int, stop: threading.Event, results: dict) -> list[threading.Thread]:
    """`clients` threads posting to `url` back to back; counts successes and failure times."""

    def run() -> None:
        with httpx.Client(timeout=10, trust_env=False) as client:
            while not stop.is_set():
                try:
                    ok = client.post(url, json={"features": ["python"]}).status_code == 200
                except httpx.HTTPError:
                    ok = False
                with results["lock"]:
                    results["ok"] += ok
                    results["ok_in_a_row"] = results["ok_in_a_row"] + 1 if ok else 0
                    if not ok:
                        results["failed_at"].append(time.monotonic())

    threads = [threading.Thread(target=run, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    return threads


def new_results() -> dict:
    return {"ok": 0, "ok_in_a_row": 0, "failed_at": [], "lock": threading.Lock()}


def test_autoscaling_sees_direct_load_and_scales_up_then_down(two_nodes):
    direct = f"http://{HEAD_IP}:{two_nodes.up.direct['ignore_gen'].rsplit(':', 1)[1]}/generate"
    stop, results = threading.Event(), new_results()
    counts: list[tuple[float, int]] = []
    start = time.monotonic()
    threads = _load(direct, 24, stop, results)
    try:
        peak = wait_for(
            lambda: (
                counts.append((time.monotonic() - start, two_nodes.placement().get("replicas", 0))) or counts[-1][1] > 2
            ),
            90,
        )
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=15)
    assert peak, f"never scaled above 2 replicas under direct load: {counts}"
    down = wait_for(
        lambda: (
            counts.append((time.monotonic() - start, two_nodes.placement().get("replicas", 0))) or counts[-1][1] == 2
        ),
        120,
    )
    print("ignore_gen replicas over time (s, replicas):", counts)
    assert down, f"never scaled back to 2 replicas: {counts}"
    assert results["ok"] > 0


def test_killing_the_worker_under_load_only_fails_requests_in_flight(two_nodes):
    """Serve's route under load while the worker node dies: a few requests in flight on it
    fail, then every request succeeds again (until 40 in a row have succeeded)."""
    clients = 8
    serve = two_nodes.up.base_url + "/ignore/generate"
    stop, results = threading.Event(), new_results()
    threads = _load(serve, clients, stop, results)
    try:
        eventually_sync(lambda: results["ok"] >= 2 * clients, timeout=60, interval=0.1, what="the load flowing")
        ok_before, failed_before = results["ok"], len(results["failed_at"])
        killed_at = time.monotonic()
        two_nodes.worker.kill()
        time.sleep(12)  # longer than the clients' 10 s timeout: a request stuck on the dead node has failed by now
        recovered = wait_for(lambda: results["ok_in_a_row"] >= 40, timeout=120, interval=0.5)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=15)
    failed = len(results["failed_at"])
    window = max([killed_at, *results["failed_at"]]) - killed_at
    print(
        f"kill under load ({clients} clients): ok before {ok_before}, failed before {failed_before}; "
        f"failed after the kill {failed} within {window:.1f} s; ok at the end {results['ok']}"
    )
    assert failed_before == 0
    assert recovered, f"requests did not go on after the worker died: {failed} failures, {results}"
    assert failed <= clients * 3, f"{failed} failures: more than the requests in flight on the dead node"
    healthy = wait_for(lambda: two_nodes.placement().get("nodes") == [HEAD_IP], 60)
    assert healthy, two_nodes.placement()


NAMED_ACTORS = """
import json, time, ray
from ray._private.state import actors
ray.init(namespace="rayfleet")
def named():
    return {a["Name"]: {"state": a["State"], "ip": a["Address"]["IPAddress"], "restarts": a["NumRestarts"]}
            for a in actors().values()
            if a["Name"] and not a["ActorClassName"].startswith("Serve") and not a["Name"].startswith("SERVE")
            and a["State"] != "DEAD"}
"""


def test_named_state_actors_restart_and_the_service_keeps_answering(two_nodes):
    """Every named state actor (metrics hub, limits...) is alive after the worker died; killed
    once more with restart allowed, each comes back (on the surviving node) and ignore_gen answers."""
    code = (
        NAMED_ACTORS
        + """
before = named()
for name in before:
    ray.kill(ray.get_actor(name), no_restart=False)
deadline = time.monotonic() + 60
after = named()
while time.monotonic() < deadline and not all(
    a["state"] == "ALIVE" and a["restarts"] > before[n]["restarts"] for n, a in after.items() if n in before
):
    time.sleep(0.5)
    after = named()
print(json.dumps({"before": before, "after": after}))
"""
    )
    seen = two_nodes.driver(code)
    before, after = seen["before"], seen["after"]
    print("named actors before/after restart:", json.dumps(seen))
    assert before, "no named state actor found"
    assert all(a["state"] == "ALIVE" for a in before.values()), before
    for name, actor in before.items():
        assert after[name]["state"] == "ALIVE" and after[name]["restarts"] > actor["restarts"], (name, after)
        assert after[name]["ip"] == HEAD_IP
    with httpx.Client(trust_env=False, timeout=30) as client:
        assert client.get(two_nodes.up.base_url + "/ignore/metrics").status_code == 200
        assert client.post(two_nodes.up.base_url + "/ignore/generate", json={"features": ["go"]}).status_code == 200
