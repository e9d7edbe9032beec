"""Web filter: the cost of TLS interception (ssl_bump) against tunnelling, on the same HTTPS origin.

Origin: HAProxy terminating TLS on a loopback address, port 443 (`http-request return`, no Python), with a
certificate from a bench CA that Squid is given as `proxy.tls_outgoing_cafile`. The web filter runs in
process with its real Squid; `ssl_bump_enabled` is switched through the API between the phases.

Peers measured in the same run, each with the same Python client (aiohttp, `--clients` concurrent
requests spread over `--procs` processes, one connection per client, kept alive; only 2xx count):
  * direct: the client straight to the origin over TLS;
  * tunnel: through Squid with ssl_bump off (CONNECT, the client's TLS goes end to end);
  * bump:   through Squid with ssl_bump on (Squid decrypts, filters the https URL, re-encrypts);
  * splice: through Squid with ssl_bump on and the origin's name on the `tls-splice` list (Squid peeks at
            the SNI, then tunnels: the client's TLS goes end to end, as in `tunnel`).
and the same three with a new connection (and TLS handshake) per request (`--fresh`, on by default).
wrk cannot send https through a proxy, so the client is Python: it is part of the load on the 2 cores and
the direct figure is bounded by it; the ratios bump/tunnel are what this measures.

The phases run in `--rounds` interleaved rounds (direct, tunnel, bump, again) and the median is reported,
with the range, because the machine's other load moves single figures a lot.

Usage:  python bench/webfilter_tls.py [--duration 8] [--clients 16] [--procs 2] [--rounds 3] [--no-fresh]
Needs root for port 443 on loopback (Squid only lets CONNECT reach 443/8443). Stops everything it starts.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import aiohttp.abc
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic import SecretStr  # noqa: E402

from bench import static_origin  # noqa: E402
from deployments.webfilter.app import create_app  # noqa: E402
from deployments.webfilter.config import ProxyConfig, WebfilterConfig  # noqa: E402
from rayfleet import state  # noqa: E402
from tests.deployments.webfilter import tlsorigin  # noqa: E402

PASSWORD = "Bench-admin-pass-1!"
HOST = "bench.test"
LABELS = {False: "kept-alive connections", True: "new connection per request"}


def haproxy_tls_origin(folder: Path, address: str) -> tuple[subprocess.Popen[bytes], Path]:
    """HAProxy answering 200 over TLS on address:443; returns the process and the CA file that signs it."""
    ca_key, key = tlsorigin.new_key(), tlsorigin.new_key()
    ca = tlsorigin.issue("rayfleet bench origin CA", ca_key, None, [])
    cert_path, key_path = tlsorigin.write_pair(folder, "origin", tlsorigin.issue(HOST, key, (ca, ca_key), [HOST]), key)
    bundle = folder / "origin-bundle.pem"
    bundle.write_bytes(cert_path.read_bytes() + key_path.read_bytes())
    ca_file = folder / "origin-ca.pem"
    ca_file.write_bytes(tlsorigin.pem(ca))
    rule = static_origin.Rule("", 200, "text/plain", b"origin ok")
    proc, _ = static_origin.start(folder / "origin", [rule], address=address, port=443, tls_bundle=bundle)
    return proc, ca_file


async def _load(
    url: str, proxy: str | None, cafile: str, clients: int, seconds: float, fresh: bool, address: str | None
) -> tuple[int, int]:
    """(2xx, requests) of `clients` concurrent loops for `seconds`; `fresh`: a new connection per request;
    `address`: connect there instead of resolving the URL's name (the direct peer)."""
    context = ssl.create_default_context(cafile=cafile)
    counts = [0, 0]
    deadline = time.monotonic() + seconds

    async def one(session: aiohttp.ClientSession) -> None:
        try:
            async with session.get(url, proxy=proxy, ssl=context) as response:
                await response.read()
                counts[0] += 200 <= response.status < 300
        except aiohttp.ClientError:
            pass
        counts[1] += 1

    async def loop(shared: aiohttp.ClientSession) -> None:
        while time.monotonic() < deadline:
            if fresh:
                async with aiohttp.ClientSession(connector=connector(force_close=True)) as session:
                    await one(session)
            else:
                await one(shared)

    def connector(**kwargs: Any) -> aiohttp.TCPConnector:
        return aiohttp.TCPConnector(resolver=Pinned(address) if address else None, **kwargs)

    async with aiohttp.ClientSession(connector=connector(limit=clients)) as shared:
        await asyncio.gather(*(loop(shared) for _ in range(clients)))
    return counts[0], counts[1]


class Pinned(aiohttp.abc.AbstractResolver):
    """Every name resolves to one address (the direct peer talks to the origin as bench.test)."""

    def __init__(self, address: str) -> None:
        self.address = address

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict[str, Any]]:
        return [
            {"hostname": host, "host": self.address, "port": port, "family": socket.AF_INET, "proto": 0, "flags": 0}
        ]

    async def close(self) -> None:
        return None


def _process(args: tuple[str, str | None, str, int, float, bool, str | None]) -> tuple[int, int]:
    return asyncio.run(_load(*args))


def measure(
    url: str, proxy: str | None, cafile: str, clients: int, procs: int, seconds: float, fresh: bool, address: str | None
) -> dict:
    """2xx per second with `clients` concurrent requests spread over `procs` client processes."""
    per = [clients // procs + (i < clients % procs) for i in range(procs)]
    with multiprocessing.get_context("spawn").Pool(procs) as pool:
        results = pool.map(_process, [(url, proxy, cafile, n, seconds, fresh, address) for n in per])
    ok = sum(r[0] for r in results)
    return {"rps": ok / seconds, "ok": ok, "total": sum(r[1] for r in results)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=float, default=8)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-fresh", action="store_true", help="skip the new-connection-per-request phases")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="wf-tls-bench-", dir="/tmp"))
    os.chmod(base, 0o711)
    address = tlsorigin.free_https_address()
    origin, ca_file = haproxy_tls_origin(base, address)
    os.chmod(ca_file, 0o644)
    runs: dict[str, list[dict]] = {
        f"{m} ({label})": [] for label in LABELS.values() for m in ("direct", "tunnel", "bump", "splice")
    }
    try:
        with state.local_state():
            state.reset_local_state()
            config = WebfilterConfig(
                data_dir=base / "wf",
                proxy=ProxyConfig(hosts={HOST: address}, tls_outgoing_cafile=str(ca_file)),
                admin_password=SecretStr(PASSWORD),
            )
            app = create_app(config)
            async with app.router.lifespan_context(app):
                status = await app.state.component.proxy.status.remote()
                proxy = f"http://127.0.0.1:{status['port']}"
                transport = httpx.ASGITransport(app)
                async with httpx.AsyncClient(transport=transport, base_url="http://w", auth=("admin", PASSWORD)) as api:
                    ca = (await api.get("/api/security/download-ca")).content
                    our_ca = base / "interception-ca.pem"
                    our_ca.write_bytes(ca)
                    url = f"https://{HOST}/bench"
                    phases = [False] if args.no_fresh else [False, True]
                    for _ in range(args.rounds):  # interleaved, so the machine's other load hits every mode
                        for fresh in phases:
                            label = LABELS[fresh]
                            runs[f"direct ({label})"].append(
                                measure(
                                    url, None, str(ca_file), args.clients, args.procs, args.duration, fresh, address
                                )
                            )
                            for mode, trust in (("tunnel", ca_file), ("bump", our_ca), ("splice", ca_file)):
                                r = await api.put("/api/settings/ssl_bump_enabled", json={"value": mode != "tunnel"})
                                assert r.status_code == 200, r.text
                                if mode == "splice":
                                    r = await api.post("/api/tls-splice", json={"domain": HOST})
                                    assert r.status_code == 200, r.text
                                runs[f"{mode} ({label})"].append(
                                    measure(
                                        url, proxy, str(trust), args.clients, args.procs, args.duration, fresh, None
                                    )
                                )
                                if mode == "splice":
                                    await api.delete("/api/tls-splice/clear-all")
                    await api.put("/api/settings/ssl_bump_enabled", json={"value": False})
                await app.state.component.logs.stop.remote()
                await app.state.component.proxy.stop.remote()
            state.reset_local_state()
    finally:
        origin.kill()
        origin.wait()
        shutil.rmtree(base, ignore_errors=True)
    load = os.getloadavg()
    print(
        f"# https through the web filter: {args.clients} clients over {args.procs} processes, "
        f"{args.duration:g} s per phase, {args.rounds} interleaved rounds (median, min-max of 2xx/s)"
    )
    print(f"# load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    median = {name: statistics.median(r["rps"] for r in got) for name, got in runs.items() if got}
    for name, got in runs.items():
        if got:
            rps = [r["rps"] for r in got]
            ok, total = sum(r["ok"] for r in got), sum(r["total"] for r in got)
            print(f"{name:42s} {median[name]:8.0f}  ({min(rps):.0f}-{max(rps):.0f}; {ok} of {total} requests 2xx)")
    for label in LABELS.values():
        if f"bump ({label})" in median:
            b, t, d, sp = (median[f"{mode} ({label})"] for mode in ("bump", "tunnel", "direct", "splice"))
            print(
                f"ratio bump/tunnel ({label}): {b / t:.2f}; splice/tunnel: {sp / t:.2f}; splice/bump: {sp / b:.2f}; "
                f"tunnel/direct: {t / d:.2f}"
            )


if __name__ == "__main__":
    asyncio.run(main())
