"""Command line: ``python -m sims.pve --port N --state DIR --authorized-keys FILE``."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from pathlib import Path

from .host import Host, make_cluster, make_host
from .nodestatus import set_hardware
from .server import SimServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="pve-sim", description="Simulated Proxmox VE host over SSH")
    parser.add_argument("--port", type=int, default=2222)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--state", required=True, help="directory holding the persistent model")
    parser.add_argument("--authorized-keys", required=True, help="OpenSSH authorized_keys file")
    parser.add_argument(
        "--host-key", help="host private key (generated when missing; default STATE/ssh_host_ed25519_key)"
    )
    parser.add_argument("--node", default="pve", help="node name for a new state directory")
    parser.add_argument(
        "--nodes",
        help="a cluster: comma-separated node names sharing the state directory, "
        "each on its own port from --port on (pve1,pve2,pve3 listen on PORT, PORT+1, PORT+2)",
    )
    parser.add_argument(
        "--op-delay",
        type=float,
        default=0.0,
        help="seconds a long operation (create, backup, snapshot, migrate) holds the container lock",
    )
    parser.add_argument(
        "--exit-with-parent",
        type=int,
        metavar="PID",
        help="exit when the process PID is gone (the demo host lives as long as `rayfleet up`)",
    )
    parser.add_argument(
        "--hardware",
        action="append",
        default=[],
        metavar="[NODE=]CPUS:MEMORY_MB",
        help="a node's CPUs and memory in MB (`pvesh get /nodes/<node>/status`), kept in its state; "
        "without NODE= every node; repeatable (default of a new node: 16:65536)",
    )
    parser.add_argument("--password-env", help="name of an environment variable holding an accepted password")
    args = parser.parse_args(argv)

    state = Path(args.state)
    if args.nodes:
        hosts = make_cluster(state, [n.strip() for n in args.nodes.split(",") if n.strip()], op_delay=args.op_delay)
        sims = [(SimServer(h, h.model.dir), Path(h.model.dir) / "ssh_host_ed25519_key") for h in hosts]
    else:
        host = make_host(state, node=args.node, op_delay=args.op_delay)
        sims = [(SimServer(host, state), Path(args.host_key or state / "ssh_host_ed25519_key"))]
    for spec in args.hardware:
        _apply_hardware([s.host for s, _ in sims], spec, parser)
    password = os.environ.get(args.password_env) if args.password_env else None

    async def run() -> None:
        for offset, (sim, host_key) in enumerate(sims):
            port = await sim.start(
                args.bind, args.port + offset if args.port else 0, host_key, args.authorized_keys, password
            )
            print(f"pve-sim node={sim.host.model.node} listening on {args.bind}:{port}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        watchers = []
        if args.exit_with_parent:
            watchers.append(asyncio.create_task(_watch_parent(args.exit_with_parent, stop)))
        await stop.wait()
        for watcher in watchers:
            watcher.cancel()
        for sim, _ in sims:
            sim.close()

    asyncio.run(run())


def _apply_hardware(hosts: list[Host], spec: str, parser: argparse.ArgumentParser) -> None:
    name, _, size = spec.rpartition("=")
    cpus, _, memory = size.partition(":")
    targets = [h for h in hosts if not name or h.model.node == name]
    if not targets or not cpus.isdigit() or not memory.isdigit():
        parser.error(f"--hardware {spec}: expected [NODE=]CPUS:MEMORY_MB naming a node of this simulator")
    for host in targets:
        try:
            set_hardware(host.model, int(cpus), int(memory))
        except ValueError as exc:
            parser.error(f"--hardware {spec}: {exc}")


async def _watch_parent(pid: int, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            os.kill(pid, 0)
        except OSError:
            stop.set()
            return
        await asyncio.sleep(1.0)


if __name__ == "__main__":
    main()
