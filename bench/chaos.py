"""Chaos run: mixed writes over the components while replicas, actors, data planes, a worker
node and the GCS die; afterwards every acknowledged write is looked up.

Jepsen in small, on one machine and loopback only. `rayfleet up` runs with the GCS in Redis
(its own namespace, removed at the end) and the bench joins a worker node to its cluster, so
there are two nodes. Writers add entries through the public APIs, each a fresh name, and
record every one the API acknowledged (2xx):

- web filter: a domain on the blacklist        (`POST /webfilter/api/domain-blacklist`)
- task network: a task                          (`POST /tasknet/n1/tasks`)
- mitigation: a rule and a ban on node-1        (`POST /mitigation/nodes/node-1/api/v1/{rules,blacklist}`)
- LLM gateway: an endpoint in the registry      (`POST /llm/api/v1/registry`), and a virtual key
  (`POST /llm/api/v1/keys`) where the gateway has them
- memory: a memory through `mem serve`          (`POST /memories`)

Every ``--fault-every`` seconds the next fault is taken from a seeded shuffle of every kind
(each kind comes up once per round): kill a Serve replica, kill a named actor (Ray restarts
it), SIGKILL a data-plane child (Squid, dnsmasq, HAProxy), SIGKILL the GCS, SIGKILL the
worker node (a new one joins), SIGKILL `mem serve` (started again, as its service manager
would). After the run the bench waits until every writer can list again, then looks every
acknowledged write up.

Printed, and written as JSON with ``--json``: requests, failures and lost writes per writer;
failed requests per fault kind (attributed to the fault before them, within 10 s); time to
recover per fault kind (from the fault to the first success of every writer it broke). The
goal is 0 lost writes.

Usage: python bench/chaos.py [--minutes 10 | --rounds N] [--seed 1] [--fault-every 15] [--json out.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rayfleet import nodes, upstate  # noqa: E402
from rayfleet.gcs import forget_namespace, parse_storage  # noqa: E402
from rayfleet.launcher import Launched, launch  # noqa: E402

APPS = ["webfilter", "tasknet", "mitigation", "llm_gateway"]
KINDS = ("replica", "actor", "child", "gcs", "node", "mem")
ATTRIBUTION_S = 10.0
WRITE_PACE_S = 0.2


@dataclass
class Writer:
    """Adds entries through one API and looks them up afterwards."""

    name: str
    add: Callable[[httpx.Client, str], httpx.Response]
    present: Callable[[httpx.Client], set[str]] | None  # None: a reader, nothing to look up afterwards
    acknowledged: list[str] = field(default_factory=list)
    outcomes: list[tuple[float, bool]] = field(default_factory=list)
    refusals: Counter[str] = field(default_factory=Counter)


def _items(body: Any, key: str) -> list[dict[str, Any]]:
    """The list of objects in an answer, whether it is the body or under a usual key."""
    if isinstance(body, list):
        return [i for i in body if isinstance(i, dict)]
    for name in (key, "data", "items", "entries"):
        if isinstance(body, dict) and isinstance(body.get(name), list):
            return [i for i in body[name] if isinstance(i, dict)]
    raise ValueError(f"no list of {key} in the answer")


class Memory:
    """`mem serve` on a fixed port and database; SIGKILLed by the fault, started again by `restart`."""

    def __init__(self, folder: Path) -> None:
        self.env = {**os.environ, "MEM_DB": str(folder / "memories.db"), "MEM_SERVE_TOKEN": uuid.uuid4().hex}
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"X-MEM-Token": self.env["MEM_SERVE_TOKEN"]}

    def start(self) -> None:
        mem = str(Path(sys.executable).with_name("mem"))
        self.proc = subprocess.Popen(
            [mem, "serve", str(self.port)], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdout is not None
        self.port = int(json.loads(self.proc.stdout.readline())["port"])

    def kill(self) -> str:
        assert self.proc is not None
        pid = self.proc.pid
        self.proc.kill()
        self.proc.wait()
        self.start()
        return f"mem serve {pid}"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


def writers(secrets: dict[str, str], memory: Memory, client: httpx.Client) -> list[Writer]:
    wf_auth = ("admin", secrets["WEBFILTER_ADMIN_PASSWORD"])
    node_tokens = dict(item.split(":", 1) for item in secrets["TASKNET_NODE_TOKENS"].split(","))
    # every node's own balance pays for its tasks: the writer goes round the nodes the fleet runs
    # (the secrets hold tokens for five; config/tasknet.yaml runs three)
    node_tokens = {n: t for n, t in node_tokens.items() if client.get(f"/tasknet/{n}/state").status_code == 200}
    task_nodes = itertools.cycle(sorted(node_tokens))
    mitigation = {"X-Service-API-Key": secrets["MANAGEMENT_API_KEY"]}
    llm_admin = {"Authorization": f"Bearer {secrets['LLM_PROXY_ADMIN_KEYS'].split(',')[0]}"}
    node1 = "/mitigation/nodes/node-1/api/v1"
    ban_ips: dict[str, str] = {}

    def domains(c: httpx.Client) -> set[str]:
        found: set[str] = set()
        while True:
            params = {"limit": 1000, "offset": len(found), "search": "chaos-"}
            page = c.get("/webfilter/api/domain-blacklist", params=params, auth=wf_auth).json()["data"]
            found |= {str(item["domain"]).removesuffix(".test") for item in page}
            if len(page) < 1000:
                return found

    def task(c: httpx.Client, n: str) -> httpx.Response:
        node = next(task_nodes)
        return c.post(
            f"/tasknet/{node}/tasks", json={"title": n, "reward": 1}, headers={"X-Node-Token": node_tokens[node]}
        )

    def tasks(c: httpx.Client) -> set[str]:
        found: set[str] = set()
        for node in node_tokens:
            state = c.get(f"/tasknet/{node}/state").json()
            channels = [c for c in state.values() if isinstance(c, dict) and "tasks" in c]
            found |= {str(t.get("title")) for chan in channels for t in chan["tasks"].values()}
        return found

    def ban(c: httpx.Client, n: str) -> httpx.Response:
        ip = ban_ips.setdefault(n, f"198.19.{len(ban_ips) // 250}.{len(ban_ips) % 250 + 1}")
        return c.post(f"{node1}/blacklist", json={"ip": ip, "reason": n, "duration_seconds": 86400}, headers=mitigation)

    def bans(c: httpx.Client) -> set[str]:
        listed = {str(b["ip"]) for b in _items(c.get(f"{node1}/blacklist", headers=mitigation).json(), "blacklist")}
        return {n for n, ip in ban_ips.items() if ip in listed}

    def memories(c: httpx.Client) -> set[str]:
        body = c.get(memory.url + "/memories", params={"limit": 10000}, headers=memory.headers).json()
        return {str(m["key"]) for m in body["memories"]}

    found = [
        Writer(
            "webfilter domain",
            lambda c, n: c.post("/webfilter/api/domain-blacklist", json={"domain": f"{n}.test"}, auth=wf_auth),
            domains,
        ),
        Writer("tasknet task", task, tasks),
        Writer(
            "mitigation rule",
            lambda c, n: c.post(
                f"{node1}/rules", json={"pattern": n, "action": "block", "severity": "low"}, headers=mitigation
            ),
            lambda c: {str(r["pattern"]) for r in _items(c.get(f"{node1}/rules", headers=mitigation).json(), "rules")},
        ),
        Writer("mitigation ban", ban, bans),
        Writer(
            "gateway registry",
            lambda c, n: c.post(
                "/llm/api/v1/registry",
                json={"name": n, "base_url": "http://127.0.0.1:9/v1", "provider": "openai_compat", "priority": 5},
                headers=llm_admin,
            ),
            lambda c: {str(e["id"]) for e in _items(c.get("/llm/api/v1/registry", headers=llm_admin).json(), "data")},
        ),
        Writer(
            "memory",
            lambda c, n: c.post(
                memory.url + "/memories", json={"key": n, "value": f"chaos {n}"}, headers=memory.headers
            ),
            memories,
        ),
    ]
    if client.get("/llm/api/v1/keys", headers=llm_admin).status_code == 200:
        found.append(
            Writer(
                "gateway virtual key",
                lambda c, n: c.post("/llm/api/v1/keys", json={"name": n}, headers=llm_admin),
                lambda c: {
                    str(k.get("name")) for k in _items(c.get("/llm/api/v1/keys", headers=llm_admin).json(), "keys")
                },
            )
        )
    return found


def direct_readers(direct: dict[str, str]) -> list[Writer]:
    """A reader per direct port: each replica's own listener, which must answer while the GCS is down."""
    from rayfleet.catalog import application

    readers = []
    for app, url in sorted(direct.items()):
        health = url.rstrip("/") + application(app).health_path
        readers.append(Writer(f"direct {app}", lambda c, n, u=health: c.get(u), None))
    return readers


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
            stop.wait(WRITE_PACE_S)  # a steady trickle of writes, not a benchmark


class Faults:
    """Kills one thing of a kind. The worker node it kills is replaced by a fresh one."""

    def __init__(self, launched: Launched, rng: random.Random, memory: Memory, root: Path) -> None:
        self.launched = launched
        self.rng = rng
        self.memory = memory
        self.root = root
        state = json.loads((launched.state_dir / "rayfleet.json").read_text())
        self.head = state["head"]
        self.auth = nodes.auth_env(Path(state["ray_auth_token_path"]))
        os.environ.update(self.auth)
        self.workers = 0
        self.worker: nodes.Node | None = None
        self._joining = threading.Thread(target=self._join_worker, daemon=True)
        self._joining.start()
        self._joining.join()
        import ray

        ray.init(address=self.head["address"], namespace="rayfleet", log_to_driver=False)

    def _join_worker(self) -> None:
        self.workers += 1
        self.worker, _ = nodes.start_node(
            f"w{self.workers}",
            self.root,
            head_address=self.head["address"],
            node_ip=self.head["address"].rsplit(":", 1)[0],
            num_cpus=1,
            env=self.auth,
        )

    def kinds(self) -> dict[str, Callable[[], str]]:
        return {
            "replica": self.replica,
            "actor": self.actor,
            "child": self.child,
            "gcs": self.gcs,
            "node": self.node,
            "mem": self.memory.kill,
        }

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
        found = {**data_plane_children(self.head["folder"])}
        if self.worker is not None:
            found.update(data_plane_children(str(self.worker.temp_dir)))
        pid, name = self.rng.choice(sorted(found.items()))
        os.kill(pid, signal.SIGKILL)
        return f"{name} {pid}"

    def gcs(self) -> str:
        state = upstate.fresh(self.launched.state_dir) or {}
        pid = state["head"]["gcs"]["pid"]  # the GCS running now (an earlier fault may have restarted it)
        os.kill(pid, signal.SIGKILL)
        return f"gcs_server {pid}"

    def node(self) -> str:
        """SIGKILL every process of the worker node (a machine dying); a new worker joins."""
        self._joining.join()
        assert self.worker is not None, "the replacement worker did not join"
        dead, self.worker = self.worker, None
        dead.kill()
        self._joining = threading.Thread(target=self._join_worker, daemon=True)
        self._joining.start()
        return f"worker node {dead.name}"

    def close(self) -> None:
        """Leave the cluster before it stops: a driver that loses the GCS for 60 s is ended by Ray."""
        import ray

        ray.shutdown()
        self._joining.join(timeout=120)
        if self.worker is not None:
            self.worker.kill()


def data_plane_children(folder: str) -> dict[int, str]:
    """Squid, dnsmasq and HAProxy processes started by a node's workers (found by ancestry)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if name in ("squid", "dnsmasq", "haproxy") and _descends_from(int(entry.name), folder):
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


def schedule(rng: random.Random) -> Iterator[str]:
    """Fault kinds in rounds: every kind once per round, in a seeded order."""
    while True:
        kinds = list(KINDS)
        rng.shuffle(kinds)
        yield from kinds


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    namespace = f"rayfleet-chaos-{uuid.uuid4().hex[:8]}"
    root = Path(tempfile.mkdtemp(prefix="rfchaos-", dir="/tmp"))
    env = {
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(ROOT),
        "RAYFLEET_GCS_REDIS": args.redis,
        "RAYFLEET_GCS_NAMESPACE": namespace,
        "RAYFLEET_DURABLE_DSN": f"sqlite:///{root / 'durable.sqlite3'}",
        "LLM_GATEWAY__DATA_DIR": str(root / "llm_gateway"),
        "TASKNET__DATA_DIR": str(root / "tasknet"),
        "WEBFILTER__DATA_DIR": str(root / "webfilter"),
    }
    os.environ.update(env)  # the worker nodes the bench joins run their actors with the same settings
    launched = launch(root / "state", APPS, env=env, cwd=ROOT, timeout=600)
    memory = Memory(root)
    faults: Faults | None = None
    try:
        faults = Faults(launched, rng, memory, root)
        summary = _chaos(launched, faults, rng, args)
        if args.json:  # written before the teardown, which a slow cluster stop must not cost
            args.json.write_text(json.dumps(summary, indent=2))
        return summary
    finally:
        if faults is not None:
            faults.close()
        memory.stop()
        launched.stop()
        forget_namespace(parse_storage(args.redis, namespace))
        shutil.rmtree(root, ignore_errors=True)


def _chaos(launched: Launched, faults: Faults, rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    with httpx.Client(base_url=launched.base_url, timeout=15, trust_env=False) as client:
        all_writers = writers(launched.secrets, faults.memory, client) + direct_readers(launched.direct)
    stop = threading.Event()
    threads = [threading.Thread(target=write_loop, args=(launched.base_url, w, stop), daemon=True) for w in all_writers]
    for t in threads:
        t.start()
    injected: list[tuple[float, str, str]] = []
    kinds = schedule(rng)
    deadline = time.monotonic() + args.minutes * 60

    def more() -> bool:
        if args.rounds:
            return len(injected) < args.rounds * len(KINDS)
        return time.monotonic() < deadline

    while not stop.wait(args.fault_every) and more():
        kind, at = next(kinds), time.time()  # the fault's time is when it strikes, not when the call returns
        try:
            what = faults.kinds()[kind]()
        except Exception as exc:  # nothing of that kind to kill right now
            what = f"skipped ({type(exc).__name__}: {exc})"
        injected.append((at, kind, what))
        print(f"{time.strftime('%H:%M:%S')} fault {kind}: {what}", flush=True)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    return report(launched.base_url, all_writers, injected, args.recovery)


def _listed(client: httpx.Client, writer: Writer, patience: float) -> set[str] | None:
    """What a writer's listing shows once it answers (it may still be recovering from the last fault)."""
    assert writer.present is not None
    deadline = time.monotonic() + patience
    while True:
        try:
            return writer.present(client)
        except Exception:
            if time.monotonic() > deadline:
                return None
            time.sleep(1)


def recovery_times(all_writers: list[Writer], injected: list[tuple[float, str, str]]) -> dict[str, list[float]]:
    """Per fault: from the fault to the first success of every writer that failed after it."""
    out: dict[str, list[float]] = defaultdict(list)
    for i, (at, kind, _) in enumerate(injected):
        until = injected[i + 1][0] if i + 1 < len(injected) else max(t for w in all_writers for t, _ in w.outcomes)
        worst = 0.0
        for w in all_writers:
            window = [(t, ok) for t, ok in w.outcomes if at <= t < until]
            if any(not ok for _, ok in window):
                last_fail = max(t for t, ok in window if not ok)
                healed = [t for t, ok in window if ok and t > last_fail]
                worst = max(worst, (healed[0] if healed else until) - at)
        out[kind].append(worst)
    return out


def report(
    base: str, all_writers: list[Writer], injected: list[tuple[float, str, str]], patience: float
) -> dict[str, Any]:
    per_fault: Counter[str] = Counter()
    by_writer: dict[str, Counter[str]] = {}
    rows = []
    with httpx.Client(base_url=base, timeout=30, trust_env=False) as client:
        for w in all_writers:
            failed = [t for t, ok in w.outcomes if not ok]
            mine = by_writer.setdefault(w.name, Counter())
            for t in failed:
                recent = [kind for at, kind, _ in injected if 0 <= t - at <= ATTRIBUTION_S]
                mine[recent[-1] if recent else "no fault"] += 1
            per_fault.update(mine)
            present = _listed(client, w, patience) if w.present is not None else set(w.acknowledged)
            lost = list(w.acknowledged) if present is None else [n for n in w.acknowledged if n not in present]
            rows.append(
                {
                    "writer": w.name,
                    "requests": len(w.outcomes),
                    "failed": len(failed),
                    "acknowledged": len(w.acknowledged),
                    "lost": len(lost),
                    "listed": present is not None,
                    "lost_examples": lost[:5],
                    "refusals": dict(w.refusals.most_common(3)),
                }
            )
    recovery = {
        kind: {"count": len(times), "p50_s": round(statistics.median(times), 2), "max_s": round(max(times), 2)}
        for kind, times in sorted(recovery_times(all_writers, injected).items())
    }
    summary = {
        "faults": dict(Counter(kind for _, kind, _ in injected)),
        "skipped": [what for _, _, what in injected if what.startswith("skipped")],
        "writers": rows,
        "failed_by_fault": dict(per_fault),
        "failed_by_writer_and_fault": {name: dict(c) for name, c in by_writer.items()},
        "recovery": recovery,
        "lost": sum(r["lost"] for r in rows),
    }
    print_summary(summary)
    return summary


def print_summary(summary: dict[str, Any]) -> None:
    print(f"\nfaults: {summary['faults']}  skipped: {len(summary['skipped'])}")
    print(f"\n{'writer':20} {'requests':>8} {'failed':>7} {'acked':>6} {'lost':>5}")
    for r in summary["writers"]:
        print(f"{r['writer']:20} {r['requests']:8} {r['failed']:7} {r['acknowledged']:6} {r['lost']:5}")
        for why, count in r["refusals"].items():
            print(f"    {count:5} x {why}")
    print(f"\nfailed requests by the fault before them (within {ATTRIBUTION_S:.0f} s): {summary['failed_by_fault']}")
    print("time to recover (fault -> every broken writer answers again):")
    for kind, r in summary["recovery"].items():
        print(f"    {kind:8} n={r['count']:3}  p50 {r['p50_s']:6.2f} s  max {r['max_s']:6.2f} s")
    print(f"lost acknowledged writes: {summary['lost']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument(
        "--rounds", type=int, default=0, help="run this many rounds of every fault kind instead of --minutes"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-every", type=float, default=15.0)
    parser.add_argument("--recovery", type=float, default=120.0, help="how long a listing may take to answer again")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    args = parser.parse_args()
    summary = run(args)
    return 1 if summary["lost"] else 0


if __name__ == "__main__":
    sys.exit(main())
