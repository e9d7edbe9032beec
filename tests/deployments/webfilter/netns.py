"""Network namespaces for LAN tests: a namespace joined to this one by a veth pair (198.18.0.0/15), a
dnsmasq upstream resolver inside one, and a client's HTTP and DNS requests sent from inside. Everything a
test creates here is removed when its context ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@dataclass
class Side:
    """A namespace joined to this one by a veth pair: `host` is our end's address, `peer` the namespace's."""

    ns: str
    link: str
    host: str
    peer: str

    def run(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns, *argv]


@contextlib.contextmanager
def namespace(prefix: str, net: str) -> Iterator[Side]:
    """`net` is a /24 prefix such as 198.18.7: our end is .1, the namespace's .2."""
    tag = f"{os.getpid() % 10000}{random.randint(10, 99)}"
    side = Side(f"rfwf-{prefix}-{tag}", f"rf{prefix}{tag}", f"{net}.1", f"{net}.2")
    try:
        _ip("netns", "add", side.ns)
        _ip("link", "add", side.link + "h", "type", "veth", "peer", "name", side.link + "n")
        _ip("link", "set", side.link + "n", "netns", side.ns)
        _ip("addr", "add", f"{side.host}/24", "dev", side.link + "h")
        _ip("link", "set", side.link + "h", "up")
        for args in (
            ("addr", "add", f"{side.peer}/24", "dev", side.link + "n"),
            ("link", "set", side.link + "n", "up"),
        ):
            _ip("netns", "exec", side.ns, "ip", *args)
        _ip("netns", "exec", side.ns, "ip", "link", "set", "lo", "up")
        yield side
    finally:
        subprocess.run(["ip", "link", "del", side.link + "h"], capture_output=True, timeout=10)
        subprocess.run(["ip", "netns", "del", side.ns], capture_output=True, timeout=10)


@contextlib.contextmanager
def private_network(prefix: str) -> Iterator[str]:
    """A network namespace holding nothing but its own loopback (up), for a process that must listen on every
    address of its node (a wildcard) without listening on this machine's: its name; removed at the end."""
    name = f"rfwf-{prefix}-{os.getpid() % 10000}{random.randint(10, 99)}"
    try:
        _ip("netns", "add", name)
        _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)


def add_ipv6(side: Side, prefix: str) -> tuple[str, str]:
    """Give both ends of the veth pair an IPv6 address in `prefix` (a /64 such as 2001:2:0:5::, from
    2001:2::/48, IPv6's benchmarking range as 198.18.0.0/15 is IPv4's): (our end's, the namespace's)."""
    host, peer = f"{prefix}1", f"{prefix}2"
    _ip("-6", "addr", "add", f"{host}/64", "dev", side.link + "h", "nodad")
    _ip("netns", "exec", side.ns, "ip", "-6", "addr", "add", f"{peer}/64", "dev", side.link + "n", "nodad")
    return host, peer


def default_route(side: Side) -> None:
    """Route everything the namespace sends through our end (so its client can ask any of our addresses)."""
    _ip("netns", "exec", side.ns, "ip", "route", "add", "default", "via", side.host)


@contextlib.asynccontextmanager
async def upstream_resolver(side: Side, records: dict[str, str]) -> AsyncIterator[None]:
    """A dnsmasq in `side`'s namespace answering `records` (name -> address) and refusing the rest."""
    argv = side.run(
        "/usr/sbin/dnsmasq",
        "-k",
        "--no-resolv",
        "--no-hosts",
        "--port=53",
        f"--listen-address={side.peer}",
        "--bind-interfaces",
        "--user=root",
        "--pid-file=",
        *(f"--host-record={name},{address}" for name, address in records.items()),
    )
    child = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        yield
    finally:
        child.kill()
        await child.wait()


async def _run(argv: list[str]) -> str:
    child = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    out, _ = await child.communicate()
    return out.decode()


async def lan_get(lan: Side, proxy: str, url: str) -> tuple[int, str]:
    """A GET from the LAN client through the proxy: (status, body); status 0 when nothing answered."""
    out = await _run(lan.run("curl", "-s", "--max-time", "10", "-x", f"http://{proxy}", "-w", "\n%{http_code}", url))
    body, _, code = out.rpartition("\n")
    return int(code or 0), body


async def lan_resolve(
    lan: Side, server: str, name: str, port: int = 53, source: str | None = None, timeout: float = 3
) -> list[str]:
    """The A records `server` answers the client in `lan` for `name` (["NXDOMAIN"], or ["TIMEOUT"] when
    nothing answered), asked from `source` (an address of the namespace) when given."""
    script = (
        "import sys, dns.exception, dns.message, dns.query, dns.rdatatype\n"
        "q = dns.message.make_query(sys.argv[2], dns.rdatatype.A)\n"
        "src = sys.argv[4] or None\n"
        "try:\n"
        "    a = dns.query.udp(q, sys.argv[1], port=int(sys.argv[3]), source=src, timeout=float(sys.argv[5]))\n"
        "except dns.exception.Timeout:\n"
        "    print('TIMEOUT'); sys.exit(0)\n"
        "print('NXDOMAIN' if a.rcode() == 3 else ' '.join(sorted(i.address for r in a.answer for i in r)))\n"
    )
    argv = lan.run(sys.executable, "-c", script, server, name, str(port), source or "", str(timeout))
    return (await _run(argv)).split()


def add_address(side: Side, address: str) -> None:
    """Give the namespace's end one more address (a /32: e.g. one it has no right to, for spoofing tests)."""
    _ip("netns", "exec", side.ns, "ip", "addr", "add", f"{address}/32", "dev", side.link + "n")
