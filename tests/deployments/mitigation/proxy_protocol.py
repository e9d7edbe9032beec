"""Raw HTTP over a socket from a chosen loopback source, optionally behind a PROXY protocol header
(v1 text or v2 binary, as a load balancer sends them), for the client-address tests."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import struct

V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"


def proxy_v1(client: str, port: int = 40000, dst: str = "127.0.0.1", dst_port: int = 80) -> bytes:
    family = "TCP6" if ":" in client else "TCP4"
    return f"PROXY {family} {client} {dst} {port} {dst_port}\r\n".encode()


def proxy_v2(client: str, port: int = 40000, dst: str = "127.0.0.1", dst_port: int = 80) -> bytes:
    src_ip, dst_ip = ipaddress.ip_address(client), ipaddress.ip_address(dst)
    if src_ip.version == 4:
        family, addresses = 0x11, src_ip.packed + dst_ip.packed  # TCP over IPv4
    else:
        dst6 = dst_ip if dst_ip.version == 6 else ipaddress.IPv6Address(f"::ffff:{dst_ip}")
        family, addresses = 0x21, src_ip.packed + dst6.packed  # TCP over IPv6
    body = addresses + struct.pack("!HH", port, dst_port)
    return V2_SIGNATURE + bytes([0x21, family]) + struct.pack("!H", len(body)) + body


async def raw_get(address: str, source: str, prefix: bytes = b"", headers: dict[str, str] | None = None) -> int:
    """Send `prefix` then `GET /` from `source`; the answer's status, 0 when the connection was
    refused or closed without an answer."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        sock.bind((source, 0))
        loop = asyncio.get_running_loop()
        await loop.sock_connect(sock, (host, int(port)))
        lines = [f"{k}: {v}" for k, v in (headers or {}).items()]
        request = "\r\n".join(["GET / HTTP/1.1", "Host: node", "Connection: close", *lines, "", ""]).encode()
        await loop.sock_sendall(sock, prefix + request)
        answer = await asyncio.wait_for(loop.sock_recv(sock, 4096), timeout=5)
    except (ConnectionError, OSError):
        return 0
    finally:
        sock.close()
    if not answer.startswith(b"HTTP/1."):
        return 0
    return int(answer.split(b" ", 2)[1])
