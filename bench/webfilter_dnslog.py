"""Web filter, DNS query log: rows/s of the tailer on a real-format dnsmasq query log (log-queries=extra)
against the HTTP access-log tailer on as many real-format lines, same run, same store.

Peer: `LogStore.tail_once` on N Squid access-log lines (parsed inside DuckDB) vs `LogStore.tail_dns_once`
on N dnsmasq queries (two lines each: the query and its answer, parsed in Python, one in ten a blocked
answer credited to its blacklist entry by a ProxyOwner-like rule index, as the proxy actor does). The figure
is DNS rows/s over HTTP rows/s.

Usage:  python bench/webfilter_dnslog.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from actors.webfilter.logstore import LogStore
from actors.webfilter.rulehits import RuleIndex
from rayfleet.state import LocalActorHandle


class Rules:
    """What `ProxyOwner.attribute_dns` answers, in process (the bench has no actor between the two)."""

    def __init__(self, entries: list[str]) -> None:
        self.index = RuleIndex({"domain-blacklist": entries})

    def attribute_dns(self, names: list[str]) -> list[tuple[str, str] | None]:
        return [self.index.decide(name) for name in names]


def dns_lines(rows: int) -> str:
    stamp = time.strftime("%b %d %H:%M:%S", time.localtime()).replace(" 0", "  ", 1)
    out = []
    for i in range(rows):
        peer = f"10.0.{i % 250}.{i % 200}/{1024 + i % 60000}"
        head = f"{stamp} dnsmasq[4242]: {i + 1} {peer}"
        name = f"d{i % 1000}.ads{i % 50}.example" if i % 10 == 0 else f"d{i % 1000}.example.com"
        out.append(f"{head} query[A] {name} from {peer.split('/')[0]}\n")
        out.append(
            f"{head} {'config' if i % 10 == 0 else 'reply'} {name} is {'0.0.0.0' if i % 10 == 0 else '93.184.216.34'}\n"
        )
    return "".join(out)


async def main(rows: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        store = LogStore(str(base / "bench.duckdb"), str(base / "access.log"))
        (base / "access.log").write_text(
            "".join(
                f"{time.time():.3f} 10.0.{i % 250}.{i % 200} GET 200 TCP_MISS 300 2000 3 - "
                f"http://d{i % 1000}.example.com/p/{i}.html agent/{i % 5}\n"
                for i in range(rows)
            )
        )
        (base / "dns.log").write_text(dns_lines(rows))
        store.dns_log = str(base / "dns.log")
        store.rules = LocalActorHandle(Rules([f"ads{i}.example" for i in range(50)]))  # type: ignore[assignment]
        started = time.perf_counter()
        http = 0
        while got := store.tail_once():
            http += got
        http_rate = http / (time.perf_counter() - started)
        started = time.perf_counter()
        dns = 0
        while got := await store.tail_dns_once():
            dns += got
        dns_rate = dns / (time.perf_counter() - started)
        blocked = store.query("SELECT count(*) FROM dns_logs WHERE blocked AND source = 'domain-blacklist'")[0][0]
        store.stop()
    print(f"HTTP access log: {http} rows at {http_rate:,.0f} rows/s")
    print(f"DNS query log:   {dns} rows at {dns_rate:,.0f} rows/s ({blocked} blocked, each with its entry)")
    print(f"ratio DNS / HTTP: {dns_rate / http_rate:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    asyncio.run(main(parser.parse_args().rows))
