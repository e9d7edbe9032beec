"""DNS probing for dns/detect: `version.bind` (CHAOS TXT) tells dnsmasq, Pi-hole (FTL) and others apart."""

from __future__ import annotations

import os
import socket
import struct
from typing import Any


def _query(name: str, qtype: int, qclass: int) -> tuple[int, bytes]:
    qid = int.from_bytes(os.urandom(2), "big")
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\x00"
    return qid, struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + struct.pack(">HH", qtype, qclass)


def _txt(answer: bytes) -> str | None:
    """The first TXT string of a response (enough for version.bind)."""
    try:
        qdcount, ancount = struct.unpack(">HH", answer[4:8])
        pos = 12
        for _ in range(qdcount):
            while answer[pos] != 0:
                pos += answer[pos] + 1
            pos += 5
        if not ancount:
            return None
        pos += 2 if answer[pos] & 0xC0 == 0xC0 else answer.index(b"\x00", pos) - pos + 1
        rdlen = struct.unpack(">H", answer[pos + 8 : pos + 10])[0]
        rdata = answer[pos + 10 : pos + 10 + rdlen]
        return rdata[1 : 1 + rdata[0]].decode(errors="replace")
    except (IndexError, struct.error, ValueError):
        return None


def probe(address: str, port: int, timeout: float = 1.0) -> dict[str, Any]:
    qid, packet = _query("version.bind", 16, 3)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.sendto(packet, (address, port))
            answer, _ = sock.recvfrom(4096)
        except OSError:
            return {"address": address, "port": port, "dns": False, "product": None}
    if answer[:2] != qid.to_bytes(2, "big"):
        return {"address": address, "port": port, "dns": False, "product": None}
    version = _txt(answer)
    lowered = (version or "").lower()
    product = "pi-hole" if "pi-hole" in lowered else "adguard" if "adguard" in lowered else None
    product = product or ("dnsmasq" if "dnsmasq" in lowered else "dns server")
    return {
        "address": address,
        "port": port,
        "dns": True,
        "product": product,
        "version": version,
        "filtering": product in ("pi-hole", "adguard"),
    }
