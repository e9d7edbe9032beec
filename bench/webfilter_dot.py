"""Web filter, DNS over TLS upstreams: queries/s and latency through our dnsmasq forwarding to a DoT upstream
(through the component's unbound forwarder on loopback) vs forwarding to the same server in plain DNS, same run.

Setup: a network namespace (veth pair, 198.19.0.0/16) holding one unbound that answers a test zone itself
(every name under it: `tests/deployments/webfilter/dotserver.py`), on port 853 with TLS (a certificate from
a test CA made for the run) and on port 53 in plain. One DataPlane (Squid + dnsmasq, supervised, as the
component runs them) is switched between `dns_upstreams: [<server>]` and
`dns_upstreams: [tls://<server>:853#<name>]` with `dns_upstream_ca_file` naming the test CA, rounds
interleaved (plain, TLS, plain, TLS, ...). In each round `--threads` client threads (dnspython, UDP, one
query at a time each) ask our dnsmasq for names never asked before (so neither dnsmasq's cache nor
unbound's answers them: every query goes upstream) for `--duration` seconds; only NOERROR answers with the
zone's address count, and each one's latency is recorded. Printed: per mode, q/s (the median of its rounds)
and p50/p99 latency over all its rounds, the failures, the CPU time dnsmasq and the forwarder (unbound)
spent per answered query (from /proc/<pid>/stat, so it holds under a loaded machine where wall-clock
figures do not), and the load average.

Usage (root: it makes a network namespace):
    python bench/webfilter_dot.py [--duration 5] [--threads 4] [--rounds 3]
Everything stays on loopback and in the namespace; it stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import statistics
import sys
import tempfile
import time
from pathlib import Path

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from actors.webfilter import dotforward  # noqa: E402
from actors.webfilter.dataplane import DataPlane, ProxySettings  # noqa: E402
from actors.webfilter.squidconf import Policy  # noqa: E402
from rayfleet.supervisor import cpu_seconds  # noqa: E402
from tests.deployments.webfilter.dotserver import ANSWER, dot_server  # noqa: E402
from tests.deployments.webfilter.netns import namespace  # noqa: E402

CERT_NAME = "dns.bench.example"
ZONE = "zone.bench.example"


def _ask(server: str, name: str) -> bool:
    try:
        answer = dns.query.udp(dns.message.make_query(name, dns.rdatatype.A), server, timeout=2)
    except Exception:
        return False
    addresses = [i.address for r in answer.answer for i in r if r.rdtype == dns.rdatatype.A]
    return answer.rcode() == dns.rcode.NOERROR and addresses == [ANSWER]


def load(server: str, tag: str, duration: float, threads: int) -> tuple[int, int, list[float]]:
    """(answered, failed, latencies in seconds of the answered) of `threads` clients asking unique names."""

    def worker(n: int) -> tuple[int, list[float]]:
        failed, seen, i, end = 0, [], 0, time.monotonic() + duration
        while time.monotonic() < end:
            started = time.perf_counter()
            if _ask(server, f"{tag}-{n}-{i}.{ZONE}"):
                seen.append(time.perf_counter() - started)
            else:
                failed += 1
            i += 1
        return failed, seen

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        results = list(pool.map(worker, range(threads)))
    latencies = [x for _, seen in results for x in seen]
    return len(latencies), sum(f for f, _ in results), latencies


def _cpu(pid: int | None) -> float:
    """CPU seconds (user + system) process `pid` used so far; 0 for none."""
    return 0.0 if pid is None else cpu_seconds(pid)


def _pids(plane: DataPlane) -> list[int | None]:
    """dnsmasq's and the forwarder's pids (None: not running)."""
    return [p.pid if p is not None else None for p in (plane.dnsmasq, plane._child(dotforward.CHILD))]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="wf-dot-bench-"))
    print(f"load average at the start: {Path('/proc/loadavg').read_text().strip()}")
    with namespace("dotb", "198.19.251") as side:
        async with dot_server(side, folder / "server", CERT_NAME, ZONE, plain=True) as server:
            modes = {
                "plain": Policy(dns_upstreams=[side.peer]),
                "tls": Policy(dns_upstreams=[server.upstream(CERT_NAME)], dns_upstream_ca_file=str(server.ca_file)),
            }
            plane = DataPlane(folder / "plane", ProxySettings())
            plane.start(modes["plain"])
            rates: dict[str, list[float]] = {m: [] for m in modes}
            latencies: dict[str, list[float]] = {m: [] for m in modes}
            failures = dict.fromkeys(modes, 0)
            cpu = {m: {"dnsmasq": 0.0, "forwarder": 0.0} for m in modes}
            try:
                for r in range(args.rounds):
                    for mode, policy in modes.items():
                        plane.apply(policy)
                        if not await asyncio.to_thread(_ask, plane.dns, f"warm-{mode}-{r}.{ZONE}"):
                            raise RuntimeError(f"{mode}: the first query was not answered")
                        pids = _pids(plane)
                        before = [_cpu(p) for p in pids]
                        ok, failed, seen = await asyncio.to_thread(
                            load, plane.dns, f"{mode}{r}", args.duration, args.threads
                        )
                        for key, pid, was in zip(("dnsmasq", "forwarder"), pids, before, strict=True):
                            cpu[mode][key] += _cpu(pid) - was
                        rates[mode].append(ok / args.duration)
                        latencies[mode] += seen
                        failures[mode] += failed
                        print(f"round {r + 1} {mode}: {ok / args.duration:.0f} q/s, {failed} failed")
            finally:
                plane.stop()
    for mode in modes:
        seen = latencies[mode]
        print(
            f"{mode}: {statistics.median(rates[mode]):.0f} q/s (median of {args.rounds} rounds), "
            f"p50 {_percentile(seen, 0.5) * 1000:.2f} ms, p99 {_percentile(seen, 0.99) * 1000:.2f} ms, "
            f"{len(seen)} answered, {failures[mode]} failed; CPU per answered query: dnsmasq "
            f"{cpu[mode]['dnsmasq'] / max(1, len(seen)) * 1e6:.0f} us, forwarder "
            f"{cpu[mode]['forwarder'] / max(1, len(seen)) * 1e6:.0f} us"
        )
    print(f"tls / plain q/s: {statistics.median(rates['tls']) / statistics.median(rates['plain']):.2f}")
    print(f"load average at the end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    asyncio.run(main())
