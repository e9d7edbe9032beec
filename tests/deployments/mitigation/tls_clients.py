"""Real TLS clients for the node tests: httpx over HTTP/2 or HTTP/1.1 from a chosen loopback source,
and a raw TLS handshake (optionally behind a PROXY header) that reports the served certificate."""

from __future__ import annotations

import asyncio
import socket
import ssl
import warnings
from dataclasses import dataclass
from pathlib import Path

import httpx
from cryptography import x509


def client_context(
    ca_file: Path, alpn: list[str] | None = None, max_version: ssl.TLSVersion | None = None
) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca_file))
    if alpn:
        ctx.set_alpn_protocols(alpn)
    if max_version is not None:
        if max_version < ssl.TLSVersion.TLSv1_2:  # let the client offer it: the node must be the one refusing
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            with warnings.catch_warnings():  # deprecated on purpose: the old version is the attack
                warnings.simplefilter("ignore", DeprecationWarning)
                ctx.minimum_version = max_version
                ctx.maximum_version = max_version
            return ctx
        ctx.maximum_version = max_version
    return ctx


def https_client(ca_file: Path, source: str = "127.0.0.1", http2: bool = True) -> httpx.AsyncClient:
    """A client that keeps its connection (h2 streams share it) and trusts only `ca_file`."""
    transport = httpx.AsyncHTTPTransport(
        local_address=source, http2=http2, http1=not http2, verify=client_context(ca_file), retries=0
    )
    return httpx.AsyncClient(transport=transport, trust_env=False, timeout=5.0)


@dataclass
class Handshake:
    serial: str | None  # hexadecimal, as the API shows it; None: no handshake
    version: str | None
    alpn: str | None
    status: int  # of a GET / after the handshake; 0: none
    error: str = ""


def _handshake(
    address: str, ctx: ssl.SSLContext, source: str, prefix: bytes, server_name: str, request: bool
) -> Handshake:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0)) as raw:
            raw.sendall(prefix)
            with ctx.wrap_socket(raw, server_hostname=server_name) as tls:
                der = tls.getpeercert(binary_form=True)
                serial = format(x509.load_der_x509_certificate(der).serial_number, "X") if der else None
                status = 0
                if request:
                    tls.sendall(b"GET / HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n")
                    answer = tls.recv(4096)
                    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else 0
                return Handshake(serial, tls.version(), tls.selected_alpn_protocol(), status)
    except (ssl.SSLError, OSError) as exc:  # refused, reset, or a failed handshake
        return Handshake(None, None, None, 0, f"{type(exc).__name__}: {exc}")


async def handshake(
    address: str,
    ctx: ssl.SSLContext,
    source: str = "127.0.0.1",
    prefix: bytes = b"",
    server_name: str = "localhost",
    request: bool = True,
) -> Handshake:
    """Connect from `source`, send `prefix` (a PROXY header), shake hands, then `GET /` over HTTP/1.1."""
    return await asyncio.to_thread(_handshake, address, ctx, source, prefix, server_name, request)
