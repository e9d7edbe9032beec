"""CPU per request of a TLS-terminating mitigation node vs a plain HAProxy reverse proxy doing the same
TLS termination, measured in the same run on loopback.

Both listen with the same certificate (ECDSA P-256, or RSA with --rsa 2048) (`ssl crt`, ALPN h2,http/1.1, TLS >= 1.2) and proxy
to the same static HAProxy origin over plain HTTP. The node also runs its stick table, bans, flood
checks and WAF (request bodies are not inspected). `wrk` drives HTTPS in two shapes:
  keep-alive      32 connections kept open: TLS record cost, no handshakes
  new connection  `Connection: close`: a full TLS handshake per request
CPU is the HAProxy processes' utime+stime from /proc/<pid>/stat before and after each run; requests
are wrk's 2xx answers only. Runs alternate peer and node, twice each, and are summed. The origin must
be at least 10x cheaper per request than the node, so that the node's own cost is what is measured.

Usage: python bench/mitigation_tls.py [--seconds 6] [--connections 32] [--rsa 2048]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from actors.mitigation.node import MitigationNode  # noqa: E402
from actors.mitigation.node_monitor import _proc_usage  # noqa: E402
from actors.mitigation.tls import issue, pem_of, write_private  # noqa: E402
from bench.wrk_load import WrkResult, wrk_run  # noqa: E402
from tests.actors.mitigation.origin import HEADER, haproxy_running, static_origin_process  # noqa: E402

PEER = (
    HEADER
    + """  timeout http-keep-alive 10s
frontend peer
  bind 127.0.0.1:{port} backlog 4096 ssl crt {pem} ssl-min-ver TLSv1.2 alpn h2,http/1.1
  default_backend origin
backend origin
  option forwardfor
  http-reuse safe
  server origin {origin} maxconn 8000
"""
)


def process_tree(pid: int) -> list[int]:
    """`pid` and its direct children (HAProxy's master and workers)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return [pid, *(int(c) for c in children)]


def peer_proxy(origin: str, pem: Path) -> contextlib.AbstractContextManager[tuple[str, int]]:
    """A plain HAProxy reverse proxy terminating TLS with `pem`: (address, pid)."""
    return haproxy_running(lambda port: PEER.format(port=port, pem=pem, origin=origin), "tlspeer")


def measure(
    url: str, pids: list[int], origin_pid: int, seconds: float, connections: int, close: bool
) -> tuple[int, float, float, WrkResult]:
    """(2xx answers, proxy CPU seconds, origin CPU seconds) of one wrk run."""
    headers = {"Connection": "close"} if close else {}
    proxy0, origin0 = _proc_usage(pids)[0], _proc_usage([origin_pid])[0]
    result = wrk_run(url, connections, seconds, headers=headers)
    proxy_cpu, origin_cpu = _proc_usage(pids)[0] - proxy0, _proc_usage([origin_pid])[0] - origin0
    return result.requests - result.non_2xx, proxy_cpu, origin_cpu, result


async def main(seconds: float, connections: int, rsa_bits: int | None) -> None:
    folder = Path(tempfile.mkdtemp(prefix="rf-tlsbench-"))
    pair = pem_of(*issue("bench", ["localhost", "127.0.0.1"], rsa_bits=rsa_bits))
    cert, key, pem = folder / "bench.crt", folder / "bench.key", folder / "bench.pem"
    cert.write_text(pair.cert_pem)
    write_private(key, pair.key_pem)
    write_private(pem, pair.combined)
    try:
        with static_origin_process() as (origin, origin_pid), peer_proxy(origin, pem) as (peer, peer_pid):
            node = MitigationNode(
                "bench-tls",
                {
                    "origin": origin,
                    "tls": {"cert_file": str(cert), "key_file": str(key)},
                    "flood_rps": 10**6,
                    "max_conn_per_source": 10**4,
                    "log_sample_percent": 0,
                },
            )
            await node.start()
            try:
                kind = f"RSA-{rsa_bits}" if rsa_bits else "ECDSA P-256"
                print(f"TLS termination ({kind}), wrk {connections} connections, {seconds:g} s per run, 2 runs each")
                for label, close in (("keep-alive", False), ("new connection", True)):
                    totals: dict[str, list[float]] = {"peer": [0, 0.0, 0.0], "node": [0, 0.0, 0.0]}
                    for _ in range(2):
                        for name, address, pids in (
                            ("peer", peer, process_tree(peer_pid)),
                            ("node", node.address, node.proc.process_ids()),
                        ):
                            ok, cpu, origin_cpu, result = await asyncio.to_thread(
                                measure, f"https://{address}/", pids, origin_pid, seconds, connections, close
                            )
                            print(f"  {label:<15} {name}: {result.row(name, connections)}")
                            totals[name][0] += ok
                            totals[name][1] += cpu
                            totals[name][2] += origin_cpu
                    per = {k: 1e6 * v[1] / max(1, v[0]) for k, v in totals.items()}
                    origin_per = 1e6 * totals["node"][2] / max(1, totals["node"][0])
                    print(
                        f"  {label}: CPU per 2xx request: node {per['node']:.1f} us, plain HAProxy "
                        f"{per['peer']:.1f} us -> node/peer x{per['node'] / max(per['peer'], 1e-9):.2f}; "
                        f"origin {origin_per:.1f} us ({per['node'] / max(origin_per, 1e-9):.1f}x cheaper than the node)"
                    )
            finally:
                await node.stop(forget=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rsa", type=int, default=None, metavar="BITS", help="an RSA key instead of ECDSA P-256")
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.connections, args.rsa))
