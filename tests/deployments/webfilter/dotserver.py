"""A DNS-over-TLS server for the DoT upstream tests and bench: unbound in a network namespace the test made,
serving TLS on port 853 with a certificate a test CA (made here with `cryptography`) issued for a name,
answering a test zone itself (every name under it, so a bench can ask unique names). With `plain`, the same
unbound answers plain DNS on port 53 too (the bench's baseline); without it, an nftables counter in the
namespace counts every packet sent to its port 53, so a test can show nothing arrived in plain."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from tests.deployments.webfilter.netns import Side
from tests.deployments.webfilter.tlsorigin import issue, new_key, pem, write_pair
from tests.polling import eventually

ANSWER = "198.18.99.99"  # what every name of the zone resolves to


@dataclass
class DotServer:
    side: Side
    ca_file: Path  # the test CA's certificate: what `dns_upstream_ca_file` names
    zone: str

    peer6: str | None = None  # its IPv6 address, when it listens on one

    def upstream(self, name: str, six: bool = False) -> str:
        host = f"[{self.peer6}]" if six else self.side.peer
        return f"tls://{host}:853#{name}"

    def plain_packets(self) -> int:
        """Packets sent to the namespace's port 53 (UDP or TCP) since the server started."""
        out = subprocess.run(
            self.side.run("nft", "-j", "list", "counter", "inet", "rfdot", "plain53"),
            capture_output=True,
            check=True,
            timeout=10,
        ).stdout
        for item in json.loads(out)["nftables"]:
            if "counter" in item:
                return int(item["counter"]["packets"])
        raise AssertionError(f"no counter in {out!r}")


def _conf(side: Side, folder: Path, zone: str, plain: bool, peer6: str | None) -> str:
    listen = [f"{side.peer}@853", *([f"{side.peer}@53"] if plain else []), *([f"{peer6}@853"] if peer6 else [])]
    lines = [
        "server:",
        *(f"    interface: {i}" for i in listen),
        "    tls-port: 853",
        f'    tls-service-key: "{folder / "server.key"}"',
        f'    tls-service-pem: "{folder / "server.pem"}"',
        "    do-daemonize: no",
        '    username: ""',
        '    chroot: ""',
        f'    directory: "{folder}"',
        '    pidfile: ""',
        "    use-syslog: no",
        '    logfile: ""',
        "    num-threads: 1",
        f"    do-ip6: {'yes' if peer6 else 'no'}",
        "    access-control: ::/0 allow",
        "    access-control: 0.0.0.0/0 allow",
        '    module-config: "iterator"',
        f'    local-zone: "{zone}." redirect',
        f'    local-data: "{zone}. 5 IN A {ANSWER}"',
        '    local-zone: "." refuse',  # nothing else, and never a recursion to the outside
        "remote-control:",
        "    control-enable: no",
    ]
    return "\n".join(lines) + "\n"


def _count_plain(side: Side) -> None:
    script = (
        "add table inet rfdot\n"
        "add counter inet rfdot plain53\n"
        "add chain inet rfdot input { type filter hook input priority 0; }\n"
        "add rule inet rfdot input udp dport 53 counter name plain53\n"
        "add rule inet rfdot input tcp dport 53 counter name plain53\n"
    )
    subprocess.run(side.run("nft", "-f", "-"), input=script.encode(), check=True, capture_output=True, timeout=10)


@contextlib.asynccontextmanager
async def dot_server(
    side: Side, folder: Path, cert_name: str, zone: str, plain: bool = False, peer6: str | None = None
) -> AsyncIterator[DotServer]:
    """unbound in `side`'s namespace on `side.peer`:853 (and `peer6`:853, an IPv6 address of the namespace,
    when given; TLS, certificate for `cert_name` from a fresh test CA) answering every name under `zone` with
    ANSWER and refusing the rest."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = new_key()
    ca = issue("rayfleet DoT test CA", ca_key, None, [])
    leaf_key = new_key()
    write_pair(folder, "server", issue(cert_name, leaf_key, (ca, ca_key), [cert_name]), leaf_key)
    (folder / "ca.pem").write_bytes(pem(ca))
    (folder / "unbound.conf").write_text(_conf(side, folder, zone, plain, peer6))
    if not plain:
        _count_plain(side)
    with (folder / "unbound.log").open("ab") as log:
        child = await asyncio.create_subprocess_exec(
            *side.run("/usr/sbin/unbound", "-d", "-c", str(folder / "unbound.conf")),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
        )
    try:
        await eventually(lambda: _listening(side), timeout=20, what="the DoT server listens on 853")
        yield DotServer(side, folder / "ca.pem", zone, peer6)
    finally:
        child.kill()
        await child.wait()


def _listening(side: Side) -> bool:
    out = subprocess.run(side.run("ss", "-Hltn", "sport = :853"), capture_output=True, timeout=10).stdout
    return b"853" in out
