"""ASN lookup API: lookups/s and p50/p99 latency through Serve and in-process, at 1/16/64 clients.

Peers measured in the same run:
  * the same ASGI app in-process (httpx.ASGITransport) vs. through Serve and the direct listener
    (real HTTP, driven by wrk: only 2xx answers count),
  * longest-prefix match: per-replica sorted arrays + bisect (what the API uses) vs.
    the same range table queried in DuckDB (`start <= ip ORDER BY start DESC LIMIT 1`),
  * by-ASN: DuckDB primary-key (ART index) lookup vs. the per-replica in-memory index.

Workloads: `asn` = random AS numbers among the ~50k that announce prefixes; `ip` = random addresses inside
announced IPv4 space. The rate limit is raised for the run (API_RATE_LIMIT) so the
benchmark measures lookups, not 429s; every request still goes through the limiter.

Usage:
    python bench/asn.py                  # in-process, then its own `rayfleet up --only asn`
    python bench/asn.py --no-serve
    python bench/asn.py --bulk-only      # POST /api/v1/ip/bulk addresses/s vs single lookups
    RAYFLEET_URL=http://127.0.0.1:8000 API_SECRET_KEY=... python bench/asn.py   # running cluster
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deployments.asn import dataset, loader  # noqa: E402
from deployments.asn.config import AsnConfig, RateLimitConfig  # noqa: E402
from deployments.asn.store import AsnStore  # noqa: E402
from rayfleet.launcher import Launched, launch  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from wrk_load import WrkResult, wrk_run  # noqa: E402

LEVELS = (1, 16, 64)
BENCH_RATE = "1000000000/minute"


@dataclass
class Result:
    label: str
    concurrency: int
    latencies: list[float]
    seconds: float
    errors: int

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        data = sorted(self.latencies)
        return data[min(len(data) - 1, int(q / 100 * len(data)))] * 1000 if data else float("nan")

    def row(self) -> str:
        return (
            f"{self.label:<24} c={self.concurrency:<3} {self.rps:9.1f} lookups/s  "
            f"p50 {self.pct(50):7.2f} ms  p99 {self.pct(99):7.2f} ms  errors {self.errors}"
        )


def percentile_us(samples: list[float], q: float) -> float:
    data = sorted(samples)
    return data[min(len(data) - 1, int(q / 100 * len(data)))] * 1e6


async def drive(
    label: str, client: httpx.AsyncClient, next_path: Callable[[random.Random], str], concurrency: int, seconds: float
) -> Result:
    """Closed loop: `concurrency` workers send back to back; one warm-up second is not counted."""
    latencies: list[float] = []
    errors = 0

    async def worker(seed: int, stop_at: float, record: bool) -> None:
        nonlocal errors
        rng = random.Random(seed)
        while time.perf_counter() < stop_at:
            path = next_path(rng)
            start = time.perf_counter()
            try:
                response = await client.get(path)
                ok = response.status_code == 200
            except httpx.HTTPError:
                ok = False
            elapsed = time.perf_counter() - start
            if not record:
                continue
            if ok:
                latencies.append(elapsed)
            else:
                errors += 1

    warm = time.perf_counter() + 1.0
    await asyncio.gather(*(worker(1000 + w, warm, False) for w in range(concurrency)))
    began = time.perf_counter()
    await asyncio.gather(*(worker(w, began + seconds, True) for w in range(concurrency)))
    return Result(label, concurrency, latencies, time.perf_counter() - began, errors)


def workloads(store: AsnStore) -> dict[str, Callable[[random.Random], str]]:
    asns = [r[0] for r in store._conn.execute("SELECT asn FROM asn WHERE v4_count + v6_count > 0").fetchall()]
    ranges = store._conn.execute("SELECT start, stop FROM range4 USING SAMPLE 20000 ROWS").fetchall()

    def asn_path(rng: random.Random) -> str:
        return f"/api/v1/asn/AS{rng.choice(asns)}"

    def ip_path(rng: random.Random) -> str:
        start, stop = rng.choice(ranges)
        value = rng.randint(start, stop)
        return "/api/v1/ip/" + ".".join(str((value >> s) & 255) for s in (24, 16, 8, 0))

    return {"asn": asn_path, "ip": ip_path}


def micro(store: AsnStore, n: int = 20000) -> list[str]:
    """Store-level timings: the LPM strategies and the by-ASN paths."""
    rng = random.Random(5)
    ranges = store._conn.execute("SELECT start, stop FROM range4 USING SAMPLE 5000 ROWS").fetchall()
    ips = [rng.randint(*rng.choice(ranges)) for _ in range(n)]
    mem: list[float] = []
    for ip in ips:
        t = time.perf_counter()
        store.match_ip(4, ip)
        mem.append(time.perf_counter() - t)
    duck: list[float] = []
    cursor = store._conn.cursor()
    for ip in ips[:300]:
        t = time.perf_counter()
        cursor.execute(
            "SELECT prefix, asn, stop FROM range4 WHERE start <= ? ORDER BY start DESC LIMIT 1", [ip]
        ).fetchone()
        duck.append(time.perf_counter() - t)
    asns = [r[0] for r in store._conn.execute("SELECT asn FROM asn USING SAMPLE 2000 ROWS").fetchall()]
    duck_asn: list[float] = []
    for asn in asns:
        t = time.perf_counter()
        cursor.execute("SELECT * FROM asn WHERE asn = ?", [asn]).fetchone()
        duck_asn.append(time.perf_counter() - t)
    memory_asn: list[float] = []
    for asn in asns:
        t = time.perf_counter()
        store.get_asn(asn)
        memory_asn.append(time.perf_counter() - t)
    p = percentile_us
    return [
        f"LPM in-memory bisect      p50 {p(mem, 50):8.1f} us  p99 {p(mem, 99):8.1f} us  ({len(mem)} lookups)",
        f"LPM DuckDB range query    p50 {p(duck, 50):8.1f} us  p99 {p(duck, 99):8.1f} us  ({len(duck)} lookups)",
        f"  -> bisect is {p(duck, 50) / p(mem, 50):.0f}x faster at p50 (DuckDB cannot use its ART index "
        "for `<=` + ORDER BY LIMIT 1)",
        f"by-ASN DuckDB PK (ART)    p50 {p(duck_asn, 50):8.1f} us  p99 {p(duck_asn, 99):8.1f} us  "
        f"({len(duck_asn)} lookups)",
        f"by-ASN in-memory record   p50 {p(memory_asn, 50):8.1f} us  p99 {p(memory_asn, 99):8.1f} us  "
        "(dict + prefix-id arrays, full record built)",
    ]


def bulk_bodies(store: AsnStore, size: int, count: int) -> list[bytes]:
    """`count` bulk bodies of `size` addresses: most inside announced IPv4 space, 1 in 20 IPv6."""
    import json

    rng = random.Random(size)
    ranges = store._conn.execute("SELECT start, stop FROM range4 USING SAMPLE 20000 ROWS").fetchall()
    bodies = []
    for _ in range(count):
        addresses = []
        for i in range(size):
            if i % 20 == 19:
                addresses.append(f"2001:{rng.randrange(0x200, 0x2C0):x}::{rng.randrange(1 << 16):x}")
                continue
            value = rng.randint(*rng.choice(ranges))
            addresses.append(".".join(str((value >> s) & 255) for s in (24, 16, 8, 0)))
        bodies.append(json.dumps({"addresses": addresses}).encode())
    return bodies


def inprocess_app(redis_url: str | None) -> tuple[str, Any, Any]:
    """(key, app, state) of the ASN app in this process, limit raised so every request is a lookup."""
    from pydantic import SecretStr

    from deployments.asn.app import create_app
    from deployments.asn.state import AsnState

    key = secrets.token_hex(24)
    config = AsnConfig(
        api_key=SecretStr(key), rate_limit=RateLimitConfig(limit=10**9, redis_url=redis_url, key_prefix="bench:asn:rl:")
    )
    state = AsnState.from_ray(config)
    app = create_app(config, state)
    state.dataset.wait(600)
    return key, app, state


async def bench_bulk(store: AsnStore, seconds: float, redis_url: str | None) -> float:
    """Addresses/s of `POST /api/v1/ip/bulk` in-process (only 200s count) against single GETs, same run."""
    key, app, state = inprocess_app(redis_url)
    transport = httpx.ASGITransport(app=app, client=("198.51.100.8", 5000))
    best = 0.0
    headers = {"X-API-Key": key, "content-type": "application/json"}
    async with httpx.AsyncClient(transport=transport, base_url="http://asn", headers=headers) as client:
        single = await drive("in-process ip (peer)", client, workloads(store)["ip"], 1, seconds)
        print(single.row() + "   = addresses/s of single lookups", flush=True)
        for size in (100, 1000, 10_000):
            bodies = bulk_bodies(store, size, 8)
            await client.post("/api/v1/ip/bulk", content=bodies[0])  # warm-up
            latencies: list[float] = []
            errors = 0
            began = time.perf_counter()
            while time.perf_counter() - began < seconds:
                t = time.perf_counter()
                response = await client.post("/api/v1/ip/bulk", content=bodies[len(latencies) % len(bodies)])
                if response.status_code == 200 and response.json()["count"] == size:
                    latencies.append(time.perf_counter() - t)
                else:
                    errors += 1
            rate = len(latencies) * size / (time.perf_counter() - began)
            best = max(best, rate)
            result = Result(f"in-process bulk {size}", 1, latencies, time.perf_counter() - began, errors)
            print(
                f"bulk of {size:>6}: {rate:9.0f} addresses/s  request p50 {result.pct(50):7.2f} ms  "
                f"p99 {result.pct(99):7.2f} ms  errors {errors}   {rate / single.rps:6.1f}x single lookups",
                flush=True,
            )
    await state.limiter.close()
    print(f"bulk lookup: {best:.0f} addresses/s at best (target >= 50000)")
    return best


def start_cluster(work: Path, ingress: str, redis_url: str | None) -> tuple[Launched, str]:
    env = {"RAYFLEET_HOME": str(ROOT), "API_RATE_LIMIT": BENCH_RATE, **({"REDIS_URL": redis_url} if redis_url else {})}
    launched = launch(work, ["asn"], ingress=ingress, env=env, cwd=ROOT, timeout=300)
    return launched, launched.secrets["API_SECRET_KEY"]


async def bench_inprocess(seconds: float, paths: dict, redis_url: str | None) -> dict[tuple[str, int], Result]:
    key, app, state = inprocess_app(redis_url)
    out = {}
    transport = httpx.ASGITransport(app=app, client=("198.51.100.7", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://asn", headers={"X-API-Key": key}) as client:
        for name, path in paths.items():
            for level in LEVELS:
                out[(name, level)] = await drive(f"in-process {name}", client, path, level, seconds)
                print(out[(name, level)].row(), flush=True)
    await state.limiter.close()
    return out


def bench_remote(
    url: str, key: str, seconds: float, paths: dict, label: str = "serve"
) -> dict[tuple[str, int], WrkResult]:
    """Drive `url` (Serve's ``<base>/asn`` or a direct listener) with wrk at every level; only 2xx count."""
    out = {}
    prefix = urlsplit(url).path.rstrip("/")
    for name, next_path in paths.items():
        rng = random.Random(11)
        targets = [prefix + next_path(rng) for _ in range(20_000)]
        for level in LEVELS:
            out[(name, level)] = wrk_run(url, level, seconds, headers={"X-API-Key": key}, paths=targets)
            print(out[(name, level)].row(f"{label} {name}", level), flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="measured seconds per level")
    parser.add_argument("--no-serve", action="store_true")
    parser.add_argument("--bulk-only", action="store_true", help="only the bulk lookup against single lookups")
    parser.add_argument(
        "--redis", metavar="URL", help="limit through Redis (in-process and in the cluster) instead of the shared actor"
    )
    parser.add_argument(
        "--ingress",
        choices=("haproxy", "proxy"),
        default=os.environ.get("RAYFLEET_INGRESS", "proxy"),
        help="Serve ingress of the cluster this benchmark starts",
    )
    args = parser.parse_args()

    config = AsnConfig()
    files = dataset.locate(config.package_dir) if (config.package_dir / "usr").exists() else None
    if files is None:
        dataset.fetch(config.package_dir)
        files = dataset.locate(config.package_dir)
    loader.ensure_database(config.db_path, files)
    store = AsnStore(config.db_path)
    paths = workloads(store)

    print("== bulk lookup in-process (POST /api/v1/ip/bulk, every address through the limiter)")
    asyncio.run(bench_bulk(store, args.seconds, args.redis))
    if args.bulk_only:
        return 0
    print("== store level (one replica, no HTTP)")
    for line in micro(store):
        print(line)
    limiter = f"Redis {args.redis}" if args.redis else "in-process actor stand-in"
    print(f"== in-process app (httpx.ASGITransport, limiter = {limiter})")
    local = asyncio.run(bench_inprocess(args.seconds, paths, args.redis))
    if args.no_serve:
        return 0

    limiter = f"Redis {args.redis}" if args.redis else "named Ray actor"
    print(f"== through Serve (real HTTP, 2 replicas, limiter = {limiter}, {args.ingress} ingress)")
    url = os.environ.get("RAYFLEET_URL")
    launched = None
    direct: dict = {}
    with tempfile.TemporaryDirectory(prefix="asn-bench-", dir=ROOT / "var") as work:
        if url:
            key = os.environ["API_SECRET_KEY"]
        else:
            launched, key = start_cluster(Path(work), args.ingress, args.redis)
            url = launched.base_url
        try:
            served = bench_remote(url + "/asn", key, args.seconds, paths)
            if launched is not None and launched.direct.get("asn"):
                print(f"== direct ingress (each replica's SO_REUSEPORT listener, {launched.direct['asn']})")
                direct = bench_remote(launched.direct["asn"], key, args.seconds, paths, label="direct")
        finally:
            if launched is not None:
                launched.stop()
    print("== Serve and direct vs in-process (throughput ratio; latency ratio at p50 / p99)")
    for (name, level), remote in served.items():
        mine = local[(name, level)]
        line = (
            f"{name:<4} c={level:<3} throughput serve/in-process {remote.rps / mine.rps:6.2f}x   "
            f"p50 {remote.p50_ms / mine.pct(50):6.1f}x   p99 {remote.p99_ms / mine.pct(99):6.1f}x"
        )
        if (name, level) in direct:
            d = direct[(name, level)]
            line += f"   direct/in-process {d.rps / mine.rps:6.2f}x   direct/serve {d.rps / remote.rps:6.2f}x"
        print(line)
    if ("ip", 16) in direct:
        print(f"direct IP lookups at 16 clients: {direct[('ip', 16)].rps:.0f}/s (target >= 1000/s)")
    ip1 = local[("ip", 1)]
    print(f"in-process p99 of an IP lookup (1 client): {ip1.pct(99):.2f} ms (Serve: {served[('ip', 1)].p99_ms:.2f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
