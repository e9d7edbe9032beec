"""Web filter, DNS: our dnsmasq with a 200k-domain blocklist vs a dnsmasq with no list, same run; and the
time from a blacklist edit to a blocked answer with 200k entries loaded.

Peers measured in the same run:
  * queries/s: the same client (N threads, each a UDP socket, dnspython) asks each dnsmasq for a name from
    its hosts file, a name under a blocked domain, and an unknown name, for `--duration` seconds; only
    answered queries count. The ratio blocklist / no list is the figure (goal >= 0.8). The Python client is
    the bottleneck at a few thousand q/s, so the ratio says "no slower at this rate", not dnsmasq's ceiling.
  * edit -> blocked answer: a DataPlane (Squid + supervised dnsmasq) runs a policy with 200k blacklisted
    domains; one more domain is applied (the previous edit's domain removed, so each edit adds one name and
    removes one) while a client thread queries its name every 5 ms, from the start of the edit, until it
    answers 0.0.0.0 (only names added since dnsmasq's start: the running dnsmasq reads them from its delta on
    SIGHUP, forwarding them to the sinkhole, before Squid reconfigures; `dns_restart_ms` is then that SIGHUP
    and the wait for dnsmasq's log to say it took them): median and max of
    `--edits` edits (goal < 1 s). Also printed: when the apply returned (Squid enforces it too: what an API
    call waits for), the medians of the apply's steps, and the CPU time of this process (rendering) and of
    its ended children (checks, the dnsmasq processes each restart ended) per edit.

Usage:  python bench/webfilter_dns.py [--entries 200000] [--duration 5] [--threads 4] [--edits 5]
Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import dns.message
import dns.query
import dns.rdatatype

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from actors.webfilter.dataplane import DataPlane, ProxySettings, free_dns_address  # noqa: E402
from actors.webfilter.squidconf import Policy, dns_blocklist  # noqa: E402


def start_dnsmasq(folder: Path, blocklist: str) -> tuple[subprocess.Popen[bytes], str]:
    address = free_dns_address()
    (folder / "hosts").write_text("127.0.0.1 static.bench.test\n")
    (folder / "blocklist.conf").write_text(blocklist)
    conf = folder / "dnsmasq.conf"
    conf.write_text(
        f"port=53\nlisten-address={address}\nbind-interfaces\nno-resolv\nno-hosts\nlocal-ttl=5\n"
        f"addn-hosts={folder / 'hosts'}\nconf-file={folder / 'blocklist.conf'}\npid-file=\nuser=root\n"
    )
    child = subprocess.Popen(["/usr/sbin/dnsmasq", "-k", "-C", str(conf)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            dns.query.udp(dns.message.make_query("static.bench.test", dns.rdatatype.A), address, timeout=0.5)
            return child, address
        except Exception:
            time.sleep(0.05)
    child.kill()
    raise RuntimeError("dnsmasq did not answer")


def load(address: str, duration: float, threads: int) -> float:
    names = ["static.bench.test", "x.d7.bench.test", "unknown.bench.test"]

    def worker() -> int:
        answered, i, end = 0, 0, time.monotonic() + duration
        while time.monotonic() < end:
            try:
                dns.query.udp(dns.message.make_query(names[i % 3], dns.rdatatype.A), address, timeout=1)
                answered += 1
            except Exception:
                pass
            i += 1
        return answered

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(lambda _: worker(), range(threads)))
    return total / duration


def _sinkholed(name: str, server: str) -> bool:
    try:
        answer = dns.query.udp(dns.message.make_query(name, dns.rdatatype.A), server, timeout=0.05)
    except Exception:  # dnsmasq is restarting
        return False
    return [i.address for r in answer.answer for i in r] == ["0.0.0.0"]


def _first_sinkholed(name: str, server: str, since: float, stop: threading.Event) -> float:
    """Seconds from `since` until `name` first answers 0.0.0.0 (queried every 5 ms)."""
    while not stop.is_set():
        if _sinkholed(name, server):
            return time.monotonic() - since
        time.sleep(0.005)
    return float("nan")


def edits(entries: list[str], count: int) -> dict[str, list[float]]:
    plane = DataPlane(Path(tempfile.mkdtemp(prefix="wf-dns-bench-")), ProxySettings())
    plane.start(Policy(domain_blacklist=entries))
    seen: dict[str, list[float]] = {"answer": [], "apply": [], "cpu_self": [], "cpu_children": []}
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as client:
            for n in range(count):
                name, stop = f"late{n}.bench.test", threading.Event()
                cpu, children = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.monotonic()
                answered = client.submit(_first_sinkholed, name, plane.dns, started, stop)
                steps = plane.apply(Policy(domain_blacklist=[*entries, name]))
                seen["apply"].append(time.monotonic() - started)
                try:
                    seen["answer"].append(answered.result(timeout=30))
                finally:
                    stop.set()
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                seen["cpu_self"].append(time.process_time() - cpu)
                seen["cpu_children"].append(after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime)
                for step in ("render_ms", "parse_ms", "dns_restart_ms", "dns_ready_ms", "reconfigure_ms"):
                    seen.setdefault(step, []).append(steps.get(step, float("nan")) / 1000)
    finally:
        plane.stop()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--edits", type=int, default=5)
    args = parser.parse_args()
    entries = [f"d{i}.bench.test" for i in range(args.entries)]
    blocklist = dns_blocklist(Policy(domain_blacklist=entries))
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        listed, listed_at = start_dnsmasq(Path(a), blocklist)
        bare, bare_at = start_dnsmasq(Path(b), "")
        try:
            assert [i.address for r in dns.query.udp(dns.message.make_query("x.d7.bench.test", dns.rdatatype.A), listed_at, timeout=2).answer for i in r] == ["0.0.0.0"]  # fmt: skip
            with_list = load(listed_at, args.duration, args.threads)
            without = load(bare_at, args.duration, args.threads)
        finally:
            for child in (listed, bare):
                child.kill()
                child.wait()
    print(f"dnsmasq q/s with {args.entries} blocked domains: {with_list:.0f}; with no list: {without:.0f}; "
          f"ratio {with_list / without:.2f}")  # fmt: skip
    seen = edits(entries, args.edits)
    answer, applied = seen["answer"], seen["apply"]
    print(f"blacklist edit -> blocked answer at {args.entries} entries: median {statistics.median(answer):.2f} s, "
          f"max {max(answer):.2f} s over {len(answer)} edits; apply returned (Squid too): median "
          f"{statistics.median(applied):.2f} s, max {max(applied):.2f} s")  # fmt: skip
    print("medians, s: " + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in seen.items()))
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
