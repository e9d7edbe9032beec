"""LLM gateway idle cost and key propagation: the CPU two idle replicas and their actors use, and how
long a virtual-key change takes to hold on every replica.

Starts the gateway alone the way the tier-3 tests start the fleet (``rayfleet up --only llm_gateway``:
a private Ray cluster on free ports, two replicas of 0.05 CPU, the demo config, a throw-away state
folder), waits until it answers, lets it settle, then reads from /proc (``rayfleet.supervisor.cpu_seconds``)
the CPU each replica and each of the gateway's actors uses over ``--window`` seconds in which nobody
sends a request, and prints it as CPU seconds per minute.

Then, ``--trials`` times: a key is created through the Serve ingress, and the gateway is asked
``GET /v1/models`` with it by four clients (Serve's proxy spreads each request over the replicas)
until every replica (``x-rayfleet-replica``) has answered 200; then the key is revoked and the same
until every replica has answered 401. Printed, from the change's answer: when the last replica had
answered with the change (an upper bound of the propagation, plus one request's time), and the latest
start of a request a replica still answered without it (a lower bound), median and max.

    python bench/llm_gateway_idle.py [--home DIR] [--settle 20] [--window 30] [--trials 10]

The fleet console's replica (started with every fleet) is measured beside them: what an idle Serve
replica with no loops of its own costs, the floor. ``--home`` runs another checkout of the project (e.g. an export of ``main``), so before and after
can be measured alternately in one session.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rayfleet.launcher import Launched, free_port, launch  # noqa: E402
from rayfleet.supervisor import cpu_seconds  # noqa: E402
from scripts.idle_cpu import descendants  # noqa: E402

REPLICA = "ServeReplica:llm_gateway"
CONSOLE = "ServeReplica:console"  # the fleet console's replica: an idle Serve replica's floor, for reference
ACTORS = (
    "BreakerBoard",
    "BudgetLedger",
    "RateLimiter",
    "RegistryBoard",
    "ControlBoard",
    "ThreatLedger",
    "LatencyBoard",
    "SessionBoard",
    "KeyBoard",
    "KeyBudgets",
    "WebhookQueue",
    "EndpointProber",
    "MetricsHub",
)
CLIENTS = 4


def title(pid: int) -> str:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return " ".join(a.decode(errors="replace") for a in argv[:2] if a).strip()[:100]


def gateway_processes(root: int) -> dict[int, str]:
    """pid -> role (``replica``, or the actor's class) of the gateway's replicas and actors."""
    out: dict[int, str] = {}
    for pid in descendants(root):
        with contextlib.suppress(OSError):
            name = title(pid)
            if REPLICA in name:
                out[pid] = "replica"
            elif CONSOLE in name:
                out[pid] = "console"
            else:
                for actor in ACTORS:
                    if f"ray::{actor}" in name:
                        out[pid] = actor
    return out


def idle_cpu(fleet: Launched, window: float) -> dict[int, tuple[str, float]]:
    """pid -> (role, CPU seconds per minute) over ``window`` seconds without a request."""
    procs = gateway_processes(fleet.proc.pid)
    before = {pid: cpu_seconds(pid) for pid in procs}
    time.sleep(window)
    out = {}
    for pid, role in procs.items():
        with contextlib.suppress(OSError):
            out[pid] = (role, (cpu_seconds(pid) - before[pid]) * 60.0 / window)
    return out


async def until_every_replica(
    url: str, key: str, status: int, replicas: int, timeout: float = 30.0
) -> tuple[float, float]:
    """Ask ``GET url`` with ``key`` until every replica has answered ``status``: (after, before) seconds,
    the latest start of a request some replica answered otherwise (the change had not reached it yet)
    and the earliest end of the first ``status`` answer of the last replica to give one (it had)."""
    started = time.perf_counter()
    first: dict[str, float] = {}  # replica -> end of its first answer of `status`
    stale: dict[str, float] = {}  # replica -> latest start of a request it answered otherwise
    deadline = started + timeout

    async def ask(client: httpx.AsyncClient) -> None:
        while len(first) < replicas and time.perf_counter() < deadline:
            sent = time.perf_counter() - started
            resp = await client.get(url, headers={"authorization": f"Bearer {key}"})
            replica = resp.headers.get("x-rayfleet-replica", "?")
            if resp.status_code == status:
                first.setdefault(replica, time.perf_counter() - started)
            else:
                stale[replica] = max(stale.get(replica, 0.0), sent)
            await asyncio.sleep(0.005)

    clients = [httpx.AsyncClient(trust_env=False, timeout=10.0) for _ in range(CLIENTS)]
    try:
        await asyncio.gather(*(ask(c) for c in clients))
    finally:
        for c in clients:
            await c.aclose()
    if len(first) < replicas:
        raise RuntimeError(f"only {len(first)} of {replicas} replicas answered {status} within {timeout:.0f} s")
    return max(stale.values(), default=0.0), max(first.values())


Trial = tuple[float, float]


async def key_trials(fleet: Launched, trials: int, replicas: int) -> tuple[list[Trial], list[Trial]]:
    base = fleet.base_url.rstrip("/") + "/llm"
    admin = {"authorization": f"Bearer {fleet.secrets['LLM_PROXY_ADMIN_KEYS'].split(',')[0]}"}
    created, revoked = [], []
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as client:
        for i in range(trials):
            resp = await client.post(f"{base}/api/v1/keys", json={"name": f"idle-bench-{i}"}, headers=admin)
            resp.raise_for_status()
            key, key_id = resp.json()["key"], resp.json()["id"]
            created.append(await until_every_replica(f"{base}/v1/models", key, 200, replicas))
            resp = await client.delete(f"{base}/api/v1/keys/{key_id}", headers=admin)
            resp.raise_for_status()
            revoked.append(await until_every_replica(f"{base}/v1/models", key, 401, replicas))
    return created, revoked


def wait_answering(fleet: Launched, timeout: float = 120.0) -> None:
    url = fleet.base_url.rstrip("/") + "/llm/health"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, trust_env=False, timeout=5.0).status_code == 200:
                return
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer 200 within {timeout:.0f} s")


def report(label: str, cpu: dict[int, tuple[str, float]], created: list[Trial], revoked: list[Trial]) -> None:
    replicas = sorted(v for role, v in cpu.values() if role == "replica")
    actors = sorted(((v, role) for role, v in cpu.values() if role not in ("replica", "console")), reverse=True)
    console = [v for role, v in cpu.values() if role == "console"]
    print(
        f"[{label}] replicas: " + ", ".join(f"{v:.2f}" for v in replicas) + " CPU s per min each"
        f" (the console's replica, for reference: {', '.join(f'{v:.2f}' for v in console)})"
    )
    print(
        f"[{label}] actors: {sum(v for v, _ in actors):.2f} CPU s per min in all: "
        + ", ".join(f"{role} {v:.2f}" for v, role in actors if v >= 0.05)
    )
    for what, times in (("created", created), ("revoked", revoked)):
        if times:
            before, after = [t[0] * 1000 for t in times], [t[1] * 1000 for t in times]
            print(
                f"[{label}] key {what} -> every replica ({len(times)} trials): held on all after at most "
                f"{statistics.median(after):.0f} ms median, {max(after):.0f} ms max; still stale on one at "
                f"{statistics.median(before):.0f} ms median, {max(before):.0f} ms max"
            )
    print(f"[{label}] load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()
    home = args.home.resolve()
    state = Path(tempfile.mkdtemp(prefix="rayfleet-gwidle-"))
    env = {
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(home),
        "PYTHONPATH": str(home),
        "LLM_GATEWAY__SERVER__PORT": str(free_port()),
        "LLM_GATEWAY__DATA_DIR": str(state / "llm_gateway"),
    }
    fleet = launch(state, ["llm_gateway"], env=env, cwd=home, timeout=600)
    try:
        wait_answering(fleet)
        time.sleep(args.settle)
        cpu = idle_cpu(fleet, args.window)
        created, revoked = asyncio.run(key_trials(fleet, args.trials, args.replicas)) if args.trials else ([], [])
        report(str(home), cpu, created, revoked)
    finally:
        fleet.stop()


if __name__ == "__main__":
    main()
