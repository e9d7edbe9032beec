"""A small closed-loop HTTP load generator shared by the benchmarks.

`concurrency` clients each send requests back to back for `seconds` (or until
`max_requests`); it reports requests/s and latency percentiles. Bounded in
count and time, loopback only.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class Result:
    label: str
    concurrency: int
    requests: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        data = sorted(self.latencies)
        return data[min(len(data) - 1, int(q / 100 * len(data)))] * 1000

    def row(self) -> str:
        return (
            f"{self.label:<34} c={self.concurrency:<3} {self.rps:9.1f} req/s  "
            f"p50 {self.pct(50):8.2f} ms  p99 {self.pct(99):8.2f} ms  errors {self.errors}"
        )


async def run(
    label: str,
    url: str,
    concurrency: int,
    seconds: float = 5.0,
    method: str = "GET",
    make_kwargs: Callable[[int], dict[str, Any]] | None = None,
    max_requests: int = 200_000,
    ok: Callable[[httpx.Response], bool] | None = None,
    headers: dict[str, str] | None = None,
) -> Result:
    """Drive `url` with `concurrency` clients; a warm-up second is not counted."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    latencies: list[float] = []
    errors = 0
    count = 0
    check = ok or (lambda r: r.status_code < 400)
    async with httpx.AsyncClient(limits=limits, timeout=30.0, trust_env=False, headers=headers) as client:

        async def one(i: int) -> float:
            kwargs = make_kwargs(i) if make_kwargs else {}
            start = time.perf_counter()
            response = await client.request(method, url, **kwargs)
            elapsed = time.perf_counter() - start
            if not check(response):
                raise RuntimeError(f"{response.status_code}: {response.text[:200]}")
            return elapsed

        warm_until = time.perf_counter() + 1.0
        while time.perf_counter() < warm_until:
            await asyncio.gather(*(one(i) for i in range(concurrency)), return_exceptions=True)

        stop_at = time.perf_counter() + seconds

        async def worker(w: int) -> None:
            nonlocal errors, count
            i = w
            while time.perf_counter() < stop_at and count < max_requests:
                count += 1
                try:
                    latencies.append(await one(i))
                except Exception:
                    errors += 1
                i += concurrency

        began = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(concurrency)))
        elapsed = time.perf_counter() - began
    return Result(label, concurrency, len(latencies), errors, elapsed, latencies)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
