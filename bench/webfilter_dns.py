"""Web filter, DNS: our dnsmasq with a 200k-domain blocklist vs a dnsmasq with no list, same run; and the
time from a blacklist edit to a blocked answer with 200k entries loaded.

Peers measured in the same run:
  * queries/s: the same client (N threads, each a UDP socket, dnspython) asks each dnsmasq for a name from
    its hosts file, a name under a blocked domain, and an unknown name, for `--duration` seconds; only
    answered queries count. The ratio blocklist / no list is the figure (goal >= 0.8). The Python client is
    the bottleneck at a few thousand q/s, so the ratio says "no slower at this rate", not dnsmasq's ceiling.
  * edit -> blocked answer: a DataPlane (Squid + supervised dnsmasq) runs a policy with 200k blacklisted
    domains; one more domain is applied and its name queried until it answers 0.0.0.0 (dnsmasq restarts to
    read the blocklist, Squid reconfigures): median and max of `--edits` edits (goal < 1 s).

Usage:  python bench/webfilter_dns.py [--entries 200000] [--duration 5] [--threads 4] [--edits 5]
Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import statistics
import subprocess
import sys
import tempfile
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


def edits(entries: list[str], count: int) -> list[float]:
    plane = DataPlane(Path(tempfile.mkdtemp(prefix="wf-dns-bench-")), ProxySettings())
    plane.start(Policy(domain_blacklist=entries))
    times = []
    try:
        for n in range(count):
            name = f"late{n}.bench.test"
            started = time.monotonic()
            plane.apply(Policy(domain_blacklist=[*entries, name]))
            while True:
                try:
                    answer = dns.query.udp(dns.message.make_query(name, dns.rdatatype.A), plane.dns, timeout=0.5)
                    if [i.address for r in answer.answer for i in r] == ["0.0.0.0"]:
                        break
                except Exception:
                    pass
            times.append(time.monotonic() - started)
    finally:
        plane.stop()
    return times


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
    times = edits(entries, args.edits)
    print(f"blacklist edit -> blocked answer at {args.entries} entries: median {statistics.median(times):.2f} s, "
          f"max {max(times):.2f} s over {len(times)} edits")  # fmt: skip


if __name__ == "__main__":
    main()
