"""Serve's HTTP ingress options, measured: default proxy vs HAProxy with direct ingress.

Starts `rayfleet up --ingress MODE` for one application, drives a cheap route at
16 and 64 concurrent clients, stops it, and prints both with their ratio.
Usage: python bench/platform_ingress.py [--app ignore_gen] [--path /ignore/healthz]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import Result, ratio, run

from rayfleet.launcher import launch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", default="ignore_gen")
    parser.add_argument("--path", default="/ignore/healthz")
    parser.add_argument("--config", default="serve.yaml")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    results: dict[tuple[str, int], Result] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("proxy", "haproxy"):
            launched = launch(Path(tmp) / mode, [args.app], ingress=mode, config=args.config)
            base = launched.base_url
            try:
                for c in (16, 64):
                    r = asyncio.run(run(f"{mode} {args.path}", base + args.path, c, args.seconds))
                    results[(mode, c)] = r
                    print(r.row(), flush=True)
            finally:
                launched.stop()
    for c in (16, 64):
        p, h = results[("proxy", c)], results[("haproxy", c)]
        print(f"c={c}: haproxy/proxy throughput {ratio(h.rps, p.rps)}, p99 {h.pct(99):.1f} ms vs {p.pct(99):.1f} ms")


if __name__ == "__main__":
    main()
