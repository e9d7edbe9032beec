"""Chaos run: mixed writes over the components while replicas, actors, data planes and the GCS die.

Jepsen in small, on one machine and loopback only. `rayfleet up` runs with the GCS in
Redis (its own namespace, removed at the end). Writers add entries through the public
APIs, each a fresh name, and record every one the API acknowledged (2xx):

- web filter: a domain on the blacklist        (`POST /webfilter/api/domain-blacklist`)
- task network: a task                          (`POST /tasknet/n1/tasks`)
- mitigation: a rule on node-1                  (`POST /mitigation/nodes/node-1/api/v1/rules`)
- LLM gateway: an endpoint in the registry      (`POST /llm/api/v1/registry`)

Meanwhile, every ``--fault-every`` seconds one fault is drawn (seeded) from: kill a Serve
replica, kill a named actor (Ray restarts it), SIGKILL a data-plane child (Squid, dnsmasq,
HAProxy), SIGKILL the GCS. After the run and a recovery wait, every acknowledged write is
looked up. Printed: requests and failures per writer, failures within 10 s of each fault
kind, and lost acknowledged writes per writer (the goal is 0; an actor that keeps its
state only in memory loses what it held when it is killed).

Usage: python bench/chaos.py [--minutes 10] [--seed 1] [--fault-every 15]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rayfleet.gcs import forget_namespace, parse_storage  # noqa: E402
from rayfleet.launcher import Launched, launch  # noqa: E402

APPS = ["webfilter", "tasknet", "mitigation", "llm_gateway"]
ATTRIBUTION_S = 10.0


@dataclass
class Writer:
    """Adds entries through one API and looks them up afterwards."""

    name: str
    add: Callable[[httpx.Client, str], httpx.Response]
    present: Callable[[httpx.Client], set[str]]
    acknowledged: list[str] = field(default_factory=list)
    outcomes: list[tuple[float, bool]] = field(default_factory=list)
    refusals: Counter[str] = field(default_factory=Counter)


def writers(secrets: dict[str, str]) -> list[Writer]:
    wf_auth = ("admin", secrets["WEBFILTER_ADMIN_PASSWORD"])
    node_tokens = dict(item.split(":", 1) for item in secrets["TASKNET_NODE_TOKENS"].split(","))
    tasknet = {"X-Node-Token": node_tokens["n1"]}
    mitigation = {"X-Service-API-Key": secrets["MANAGEMENT_API_KEY"]}
    llm_admin = {"Authorization": f"Bearer {secrets['LLM_PROXY_ADMIN_KEYS'].split(',')[0]}"}

    def domains(c: httpx.Client) -> set[str]:
        body = c.get("/webfilter/api/domain-blacklist", params={"limit": 1000, "search": "chaos-"}, auth=wf_auth)
        return {str(item["domain"]) for item in body.json()["data"]}

    def tasks(c: httpx.Client) -> set[str]:
        state = c.get("/tasknet/n1/state").json()
        channels = [c for c in state.values() if isinstance(c, dict) and "tasks" in c]
        return {str(t.get("title")) for chan in channels for t in chan["tasks"].values()}

    def rules(c: httpx.Client) -> set[str]:
        body = c.get("/mitigation/nodes/node-1/api/v1/rules", headers=mitigation).json()
        return {str(r["pattern"]) for r in body["rules"]}

    def endpoints(c: httpx.Client) -> set[str]:
        return {str(e["id"]) for e in c.get("/llm/api/v1/registry", headers=llm_admin).json()["data"]}

    return [
        Writer(
            "webfilter domain",
            lambda c, n: c.post("/webfilter/api/domain-blacklist", json={"domain": f"{n}.test"}, auth=wf_auth),
            lambda c: {d.removesuffix(".test") for d in domains(c)},
        ),
        Writer(
            "tasknet task",
            lambda c, n: c.post("/tasknet/n1/tasks", json={"title": n, "reward": 1}, headers=tasknet),
            tasks,
        ),
        Writer(
            "mitigation rule",
            lambda c, n: c.post(
                "/mitigation/nodes/node-1/api/v1/rules",
                json={"pattern": n, "action": "block", "severity": "low"},
                headers=mitigation,
            ),
            rules,
        ),
        Writer(
            "gateway registry",
            lambda c, n: c.post(
                "/llm/api/v1/registry",
                json={"name": n, "base_url": "http://127.0.0.1:9/v1", "provider": "openai_compat", "priority": 5},
                headers=llm_admin,
            ),
            endpoints,
        ),
    ]


def write_loop(base: str, writer: Writer, stop: threading.Event) -> None:
    with httpx.Client(base_url=base, timeout=15, trust_env=False) as client:
        while not stop.is_set():
            name = f"chaos-{uuid.uuid4().hex[:10]}"
            try:
                answer = writer.add(client, name)
                ok = answer.is_success
                if not ok:
                    writer.refusals[f"{answer.status_code} {answer.text[:80]}"] += 1
            except httpx.HTTPError as exc:
                ok = False
                writer.refusals[type(exc).__name__] += 1
            writer.outcomes.append((time.time(), ok))
            if ok:
                writer.acknowledged.append(name)
            time.sleep(0.2)  # a steady trickle of writes, not a benchmark


class Faults:
    """Kills one thing of a kind, drawn with the run's seed."""

    def __init__(self, launched: Launched, rng: random.Random) -> None:
        self.launched = launched
        self.rng = rng
        state = json.loads((launched.state_dir / "rayfleet.json").read_text())
        self.head = state["head"]
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ["RAY_AUTH_TOKEN_PATH"] = state["ray_auth_token_path"]
        import ray

        ray.init(address=self.head["address"], namespace="rayfleet", log_to_driver=False)

    def kinds(self) -> dict[str, Callable[[], str]]:
        return {"replica": self.replica, "actor": self.actor, "child": self.child, "gcs": self.gcs}

    def _named(self, keep: Callable[[dict[str, str]], bool]) -> dict[str, str]:
        import ray

        named = [a for a in ray.util.list_named_actors(all_namespaces=True) if keep(a)]
        return self.rng.choice(sorted(named, key=lambda a: (a["namespace"], a["name"])))

    def replica(self) -> str:
        """A Serve replica (Serve's controller starts another)."""
        import ray

        chosen = self._named(lambda a: a["namespace"] == "serve" and a["name"].startswith("SERVE_REPLICA::"))
        ray.kill(ray.get_actor(chosen["name"], namespace="serve"), no_restart=True)
        return chosen["name"]

    def actor(self) -> str:
        """A named actor of the components (Ray restarts it: max_restarts=-1)."""
        import ray

        chosen = self._named(lambda a: a["namespace"] == "rayfleet")
        ray.kill(ray.get_actor(chosen["name"], namespace="rayfleet"), no_restart=False)
        return chosen["name"]

    def child(self) -> str:
        pids = sorted(data_plane_children(self.head["folder"]).items())
        pid, name = self.rng.choice(pids)
        os.kill(pid, signal.SIGKILL)
        return f"{name} {pid}"

    def gcs(self) -> str:
        state = json.loads((self.launched.state_dir / "rayfleet.json").read_text())
        pid = state["head"]["gcs"]["pid"]
        os.kill(pid, signal.SIGKILL)
        return f"gcs_server {pid}"


def data_plane_children(head_folder: str) -> dict[int, str]:
    """Squid, dnsmasq and HAProxy processes started by this cluster's workers (found by ancestry)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if name in ("squid", "dnsmasq", "haproxy") and _descends_from(int(entry.name), head_folder):
            found[int(entry.name)] = name
    return found


def _descends_from(pid: int, marker: str) -> bool:
    seen = 0
    while pid > 1 and seen < 64:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        if marker.encode() in cmdline:
            return True
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        seen += 1
    return False


def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    namespace = f"rayfleet-chaos-{uuid.uuid4().hex[:8]}"
    state_dir = Path(tempfile.mkdtemp(prefix="rayfleet-chaos-"))
    env = {
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(ROOT),
        "RAYFLEET_GCS_REDIS": args.redis,
        "RAYFLEET_GCS_NAMESPACE": namespace,
        "LLM_GATEWAY__DATA_DIR": str(state_dir / "llm_gateway"),
        "TASKNET__DATA_DIR": str(state_dir / "tasknet"),
        "WEBFILTER__DATA_DIR": str(state_dir / "webfilter"),
    }
    launched = launch(state_dir, APPS, env=env, cwd=ROOT, timeout=600)
    try:
        return _chaos(launched, rng, args)
    finally:
        launched.stop()
        forget_namespace(parse_storage(args.redis, namespace))


def _chaos(launched: Launched, rng: random.Random, args: argparse.Namespace) -> int:
    faults = Faults(launched, rng)
    all_writers = writers(launched.secrets)
    stop = threading.Event()
    threads = [threading.Thread(target=write_loop, args=(launched.base_url, w, stop), daemon=True) for w in all_writers]
    for t in threads:
        t.start()
    injected: list[tuple[float, str, str]] = []
    deadline = time.monotonic() + args.minutes * 60
    while time.monotonic() < deadline:
        time.sleep(args.fault_every)
        kind = rng.choice(sorted(faults.kinds()))
        try:
            what = faults.kinds()[kind]()
        except Exception as exc:  # nothing of that kind to kill right now
            what = f"skipped ({type(exc).__name__}: {exc})"
        injected.append((time.time(), kind, what))
        print(f"{time.strftime('%H:%M:%S')} fault {kind}: {what}", flush=True)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    time.sleep(args.recovery)  # let restarted replicas and actors come back before the check
    return report(launched.base_url, all_writers, injected)


def report(base: str, all_writers: list[Writer], injected: list[tuple[float, str, str]]) -> int:
    print(f"\nfaults: {Counter(kind for _, kind, _ in injected)}")
    per_fault: Counter[str] = Counter()
    lost_total = 0
    with httpx.Client(base_url=base, timeout=30, trust_env=False) as client:
        print(f"\n{'writer':18} {'requests':>8} {'failed':>7} {'acked':>6} {'lost':>5}")
        for w in all_writers:
            failed = [t for t, ok in w.outcomes if not ok]
            for t in failed:
                recent = [kind for at, kind, _ in injected if 0 <= t - at <= ATTRIBUTION_S]
                per_fault[recent[-1] if recent else "no fault"] += 1
            try:
                present = w.present(client)
                lost = [n for n in w.acknowledged if n not in present]
            except Exception as exc:
                print(f"{w.name}: could not list ({type(exc).__name__}: {exc})")
                lost = list(w.acknowledged)
            lost_total += len(lost)
            print(f"{w.name:18} {len(w.outcomes):8} {len(failed):7} {len(w.acknowledged):6} {len(lost):5}")
            for why, count in w.refusals.most_common(3):
                print(f"    {count:5} x {why}")
    print(f"\nfailed requests by the fault before them (within {ATTRIBUTION_S:.0f} s): {dict(per_fault)}")
    print(f"lost acknowledged writes: {lost_total}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-every", type=float, default=15.0)
    parser.add_argument("--recovery", type=float, default=30.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379")
    args = parser.parse_args()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
