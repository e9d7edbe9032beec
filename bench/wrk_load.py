"""wrk as the load generator of the benchmarks: a C client, so the load generator is not the bottleneck.

`wrk_run` drives one URL with `connections` keep-alive connections for `seconds` and counts only
2xx answers (wrk's "Non-2xx or 3xx responses" are subtracted; a 429 or 503 is not throughput).
POST bodies and headers go through a generated Lua script.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


@dataclass
class WrkResult:
    rps: float  # 2xx answers per second
    p50_ms: float
    p99_ms: float
    non_2xx: int
    requests: int
    socket_errors: str

    def row(self, label: str, connections: int) -> str:
        return (
            f"{label:<34} c={connections:<3} {self.rps:9.1f} 2xx/s  p50 {self.p50_ms:8.2f} ms  "
            f"p99 {self.p99_ms:8.2f} ms  non-2xx {self.non_2xx}  {self.socket_errors}"
        )


def _lua(method: str, body: bytes | None, headers: dict[str, str], path: str | None, paths: list[str] | None) -> str:
    lines = [f"wrk.method = {json.dumps(method)}"]
    if body is not None:
        lines.append(f"wrk.body = {json.dumps(body.decode())}")
    for name, value in headers.items():
        lines.append(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}")
    if path is not None:
        lines.append(f"wrk.path = {json.dumps(path)}")
    if paths:
        # Each connection walks the list from its own random start: a spread of targets
        # without a per-request random number in Lua.
        lines.append("local paths = {" + ",".join(json.dumps(p) for p in paths) + "}")
        lines.append("local i = 0")
        lines.append("init = function(args) i = math.random(#paths) end")
        lines.append("request = function() i = i % #paths + 1 return wrk.format(nil, paths[i]) end")
    return "\n".join(lines) + "\n"


def parse(out: str) -> WrkResult:
    """wrk's `--latency` report as a WrkResult."""
    total = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", out)
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    if not (total and p50 and p99):
        raise RuntimeError(f"unexpected wrk output:\n{out}")
    seconds = float(total.group(2)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[total.group(3)]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    requests = int(total.group(1))
    non_2xx = int(bad.group(1)) if bad else 0
    return WrkResult(
        (requests - non_2xx) / seconds,
        float(p50.group(1)) * _UNITS_MS[p50.group(2)],
        float(p99.group(1)) * _UNITS_MS[p99.group(2)],
        non_2xx,
        requests,
        f"socket errors: {errors.group(1)}" if errors else "",
    )


def wrk_run(
    url: str,
    connections: int,
    seconds: float,
    *,
    threads: int = 2,
    timeout: float = 30.0,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    path: str | None = None,
    paths: list[str] | None = None,
) -> WrkResult:
    """One wrk run; `path` overrides the request target (an absolute URL for a forward proxy),
    `paths` spreads the requests over many targets."""
    threads = max(1, min(threads, connections))
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_lua(method, body, headers or {}, path, paths))
    try:
        argv = [
            "wrk",
            "--latency",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            f"--timeout={timeout:g}s",
        ]
        argv += ["-s", script.name, url]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + timeout + 60, check=True).stdout
    finally:
        Path(script.name).unlink(missing_ok=True)
    return parse(out)
