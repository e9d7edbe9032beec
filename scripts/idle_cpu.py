"""CPU an idle fleet burns, per process: start `rayfleet up` as the tier-3 tests do (free ports, a
throw-away state folder), let it settle, then read every descendant's CPU time from /proc over a
window in which nobody sends a request.

    python scripts/idle_cpu.py [--settle 30] [--window 60] [--apps a,b]

Prints the processes (Ray's actor name for a worker) with their CPU seconds in the window, the
total, and that total as a share of one core. A diagnostic, not a benchmark: there is no peer.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rayfleet.launcher import free_port, launch  # noqa: E402
from rayfleet.supervisor import children_of, cpu_seconds  # noqa: E402


def descendants(root: int) -> list[int]:
    """`root` and every process under it, now."""
    found, frontier = [root], [root]
    while frontier:
        children = children_of(frontier.pop())
        found.extend(children)
        frontier.extend(children)
    return found


def name_of(pid: int) -> str:
    """The process's title (Ray's actor name for a worker), its first arguments."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return " ".join(a.decode(errors="replace") for a in argv[:4] if a).strip()[:100]


def cpu_by_pid(pids: list[int]) -> dict[int, tuple[str, float]]:
    """pid -> (name, CPU seconds so far) of those still running."""
    out: dict[int, tuple[str, float]] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            out[pid] = (name_of(pid), cpu_seconds(pid))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settle", type=float, default=30.0, help="seconds to wait after the fleet is healthy")
    parser.add_argument("--window", type=float, default=60.0, help="seconds of idle time measured")
    parser.add_argument("--apps", default="", help="comma-separated applications (default: all)")
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="rayfleet-idle-"))
    env = {
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(ROOT),
        "LLM_GATEWAY__SERVER__PORT": str(free_port()),
        "LLM_GATEWAY__DATA_DIR": str(state / "llm_gateway"),
        "LXC__AUDIT_LOG": str(state / "lxc" / "audit.log"),
        "LXC__CONF_BACKUP_DIR": str(state / "lxc" / "conf-backups"),
        "TASKNET__DATA_DIR": str(state / "tasknet"),
        "WEBFILTER__DATA_DIR": str(state / "webfilter"),
    }
    started = time.monotonic()
    fleet = launch(state, args.apps.split(",") if args.apps else None, env=env, cwd=ROOT, timeout=600)
    try:
        print(f"healthy after {time.monotonic() - started:.0f} s; settling {args.settle:.0f} s", flush=True)
        time.sleep(args.settle)
        before = cpu_by_pid(descendants(fleet.proc.pid))
        time.sleep(args.window)
        after = cpu_by_pid(list(before))
        used: defaultdict[str, float] = defaultdict(float)  # CPU seconds per process name
        for pid, (name, seconds) in after.items():
            if before[pid][0] == name:  # not a new process that took a pid that ended
                used[name] += seconds - before[pid][1]
        total = sum(used.values())
        for name, seconds in sorted(used.items(), key=lambda item: -item[1])[:30]:
            print(f"{seconds:7.2f} s  {name}")
        print(f"total {total:.1f} s of CPU in {args.window:.0f} s idle: {total / args.window:.2f} of a core")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        fleet.stop()


if __name__ == "__main__":
    main()
