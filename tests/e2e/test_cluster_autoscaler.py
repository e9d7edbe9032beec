"""Tier 3: the fleet under Ray's own cluster autoscaler (fake multi-node provider).

`rayfleet up --autoscale` starts a head node whose autoscaler uses
config/cluster.autoscaling.yaml: the head has two replica slots, a worker node type
has two more. ignore_gen runs 2 to 4 replicas of one slot each (Serve autoscaling,
direct listeners bound on each node's address). Load on the head's direct listener
makes Serve want more replicas than the head holds; the ones that cannot be placed
are the demand that makes the autoscaler start a worker node; the replicas and their
direct listener land on it and answer. When the load stops, Serve removes the extra
replicas, the worker stays idle for `idle_timeout_minutes` and the autoscaler removes
it, while a steady load on Serve's route counts every answer (none may fail). At the
end `rayfleet down` leaves no process of any of the nodes behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from rayfleet.autoscaler_watch import Load, Watch
from rayfleet.cluster_autoscaler import DEFAULT_CONFIG, HEAD_IP, demo_serve_config
from rayfleet.launcher import Launched, launch
from tests.conftest import ROOT
from tests.polling import eventually_sync

APP = "ignore_gen"
# a loaded 2-core machine: a node start (raylet, workers, replicas) can take a minute or more
NODE_UP_S = 300.0
# Serve's downscale delay, the autoscaler's idle timeout, its drain and the node's exit
NODE_GONE_S = 360.0
# the demo's cool-down (Serve waits 20 s, the autoscaler 30 s) shortened for this test: what is
# tested is that both happen and nothing fails, not how long an operator wants to wait
DOWNSCALE_DELAY_S = 5
IDLE_TIMEOUT_MINUTES = 0.2


@dataclass
class Fleet:
    up: Launched
    head_folder: Path

    @property
    def direct_port(self) -> int:
        return int(self.up.direct[APP].rsplit(":", 1)[1])

    def status(self) -> dict:
        env = {**os.environ, "RAYFLEET_STATE_DIR": str(self.up.state_dir)}
        out = subprocess.run(
            [sys.executable, "-m", "rayfleet.cli", "status", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return json.loads(out.stdout)


def node_processes(folder: Path) -> list[int]:
    """Processes whose command line names the head's folder (every node the autoscaler started too)."""
    marker = str(folder).encode()
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


@pytest.fixture(scope="module")
def fleet() -> Iterator[Fleet]:
    root = Path(tempfile.mkdtemp(prefix="rfasx-", dir="/tmp"))
    config = root / "serve.yaml"
    serve_config = demo_serve_config(yaml.safe_load((ROOT / "serve.yaml").read_text()), APP)
    for app in serve_config["applications"]:
        for deployment in app.get("deployments", []):
            if "autoscaling_config" in deployment:
                deployment["autoscaling_config"]["downscale_delay_s"] = DOWNSCALE_DELAY_S
    config.write_text(yaml.safe_dump(serve_config))
    cluster_config = yaml.safe_load((ROOT / DEFAULT_CONFIG).read_text())
    cluster_config["idle_timeout_minutes"] = IDLE_TIMEOUT_MINUTES
    autoscaling = root / "cluster.autoscaling.yaml"
    autoscaling.write_text(yaml.safe_dump(cluster_config))
    env = {"RAYFLEET_AUTOSCALE": str(autoscaling), "RAYFLEET_HOME": str(ROOT)}
    up = launch(root / "state", [APP], config=str(config), env=env, cwd=ROOT, timeout=300)
    try:
        state = json.loads((root / "state" / "rayfleet.json").read_text())
        yield Fleet(up, Path(state["head"]["folder"]))
    finally:
        up.stop(timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def scale_up(fleet: Fleet, watch: Watch) -> tuple[str, Load]:
    """Heavy load on the head's direct listener until a worker node runs a replica; returns its
    address and the load (still running: the caller stops it)."""
    heavy = Load(f"http://{HEAD_IP}:{fleet.direct_port}/generate", clients=24)
    watch.loads.append(heavy)
    watch.set_phase("load")
    heavy.start()
    eventually_sync(lambda: watch.worker_ips(), timeout=NODE_UP_S, interval=1.0, what="a worker node added")
    worker_ip = watch.worker_ips()[0]
    eventually_sync(
        lambda: worker_ip in watch.sample().replica_ips,
        timeout=NODE_UP_S,
        interval=1.0,
        what="a replica running on the worker node",
    )
    return worker_ip, heavy


def proxy_listeners() -> list[tuple[str, str]]:
    """(address, pid) of every socket that one of Serve's proxies (one per node) listens on."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    return [
        (line.split()[3], line.split("pid=")[1].split(",")[0])
        for line in out.splitlines()
        if '"ray::ProxyActor"' in line
    ]


def healthz(client: httpx.Client, url: str) -> httpx.Response | None:
    try:
        return client.get(url + "/healthz")
    except httpx.ConnectError:  # not listening yet
        return None


def answers_on_the_worker(fleet: Fleet, worker_ip: str) -> None:
    """The worker's own direct listener answers, from a replica of its own, and status lists it."""
    url = f"http://{worker_ip}:{fleet.direct_port}"
    with httpx.Client(timeout=30, trust_env=False) as client:
        # the replica's actor is alive before its listener is bound: wait until it listens
        health = eventually_sync(
            lambda: healthz(client, url), timeout=NODE_UP_S, interval=1.0, what="the worker's direct listener"
        )
        answer = client.post(url + "/generate", json={"features": ["python"]})
    assert health.status_code == 200 and health.headers["x-rayfleet-replica"], health.text
    assert answer.status_code == 200 and "__pycache__" in answer.text, answer.text[:300]
    report = eventually_sync(
        lambda: (c := fleet.status()["components"][APP]) and worker_ip in c["nodes"] and c,
        timeout=60,
        what="rayfleet status listing the worker",
    )
    assert url + "/" in report["direct_urls"], report
    # the worker's Serve proxy runs on this machine too: it must not share the head's port, or the
    # kernel hands it some of the head's clients, whose requests its node's removal then cuts
    listening = eventually_sync(
        lambda: (found := proxy_listeners()) and len({pid for _, pid in found}) >= 2 and found,
        timeout=NODE_UP_S,
        interval=1.0,
        what="Serve's proxy on the worker node",
    )
    shared = {address: n for address, n in Counter(a for a, _ in listening).items() if n > 1}
    assert shared == {}, listening
    status = fleet.status()
    assert status["head"]["autoscaling"] and worker_ip in [n["ip"] for n in status["nodes"] if n["worker"]], status


def test_load_adds_a_node_replicas_answer_on_it_and_idle_time_removes_it(fleet):
    watch = Watch(fleet.up.state_dir / "rayfleet.json", APP, interval=1.0)
    steady = Load(fleet.up.base_url + "/ignore/generate", clients=1).start()
    watch.loads.append(steady)
    watch.start()
    try:
        eventually_sync(lambda: len(watch.samples) >= 3, timeout=60, what="a few looks before the load")
        assert [(s.nodes, s.workers) for s in watch.samples] == [(1, 0)] * len(watch.samples), watch.samples
        worker_ip, heavy = scale_up(fleet, watch)
        answers_on_the_worker(fleet, worker_ip)
        heavy.stop()
        watch.set_phase("cooldown")
        eventually_sync(
            lambda: watch.sample().nodes == 1, timeout=NODE_GONE_S, interval=1.0, what="the worker node removed"
        )
        watch.set_phase("after")
        eventually_sync(lambda: steady.ok.get("after", 0) >= 20, timeout=60, what="answers after the removal")
    finally:
        for load in watch.loads:
            load.stop()
        watch.stop()
        print("cluster autoscaling timeline:\n" + watch.table())
        for load in watch.loads:
            print(f"answers from {load.url} ({load.clients} clients): ok {load.ok}, failed {load.failed}")
    seen = [(s.nodes, s.workers) for s in watch.samples]
    assert max(n for n, _ in seen) >= 2 and seen[-1] == (1, 0), seen
    assert steady.ok.get("cooldown", 0) > 0, steady.ok
    assert sum(steady.failed.values()) == 0, (steady.failed, steady.errors)
    assert sum(watch.loads[1].failed.values()) == 0, (watch.loads[1].failed, watch.loads[1].errors)
    assert max(s.replicas for s in watch.samples) > 2 and watch.samples[-1].replicas == 2


def test_down_leaves_no_process_of_any_node(fleet):
    """`rayfleet down` (SIGTERM to `up`) ends the head and every node its autoscaler started."""
    assert node_processes(fleet.head_folder), "the head's processes are found by its folder"
    fleet.up.stop(timeout=120)
    left = eventually_sync(
        lambda: not node_processes(fleet.head_folder) or None, timeout=120, interval=1.0, what="no node process left"
    )
    assert left
