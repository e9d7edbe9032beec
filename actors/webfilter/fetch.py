"""SSRF-safe download of an import list: public addresses only, every redirect re-checked, size cap.

The address check is injectable (`is_allowed`) so a test can admit one loopback receiver.
The connection goes to the address that was checked, for HTTPS too (no second DNS lookup, so no
DNS rebinding between the check and the connection); the TLS handshake still sends the URL's host
as SNI and verifies the certificate against it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

MAX_REDIRECTS = 5


class FetchError(ValueError):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return bool(ip.is_global) and not ip.is_multicast


async def resolve(host: str, port: int) -> list[str]:
    """The addresses of `host` (itself when it is an address)."""
    try:
        ipaddress.ip_address(host)
        return [host]
    except ValueError:
        pass
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


@dataclass(frozen=True)
class Pinned:
    """A request to a URL whose host was resolved and checked: it connects to that address, while the
    Host header and, for HTTPS, the TLS name (SNI and certificate check) stay the URL's host."""

    url: str
    headers: dict[str, str]
    extensions: dict[str, Any]

    @classmethod
    def to(cls, url: str, address: str) -> Pinned:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        netloc = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
        host_port = parts.netloc.rpartition("@")[2]
        tls_name = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
        return cls(urlunsplit(parts._replace(netloc=netloc)), {"Host": host_port}, tls_name)


@dataclass(frozen=True)
class Fetched:
    """One download: `status` 200 with `body`, or 304 (the copy the validators name is still current)."""

    status: int
    body: bytes = b""
    etag: str = ""
    last_modified: str = ""


async def fetch_text(url: str, max_bytes: int, is_allowed: Callable[[str], bool] = is_public) -> str:
    """The body of `url` as text; FetchError(400) for a refused address or URL, (413) too big, (502) upstream."""
    return (await fetch(url, max_bytes, is_allowed)).body.decode("utf-8", "replace")


def _conditional(etag: str, last_modified: str) -> dict[str, str]:
    headers = {"If-None-Match": etag} if etag else {}
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


async def fetch(
    url: str,
    max_bytes: int,
    is_allowed: Callable[[str], bool] = is_public,
    etag: str = "",
    last_modified: str = "",
    verify: ssl.SSLContext | bool = True,
) -> Fetched:
    """GET `url`, every hop checked; with `etag` / `last_modified` (from an earlier answer) it is a conditional
    request, and a 304 answer comes back as such. `verify`: how HTTPS certificates are checked (the
    system's CAs unless a test names its own). FetchError as `fetch_text`."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(current)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchError(400, "import URL must be http(s) with a host")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            addresses = await resolve(parts.hostname, port)
        except OSError:
            raise FetchError(400, "import URL host does not resolve") from None
        if not addresses or not all(is_allowed(a) for a in addresses):
            raise FetchError(400, "import URL resolves to a non-public address")
        hop = Pinned.to(current, addresses[0])
        headers = {**hop.headers, **_conditional(etag, last_modified)}
        async with httpx.AsyncClient(timeout=15, follow_redirects=False, trust_env=False, verify=verify) as client:
            try:
                async with client.stream("GET", hop.url, headers=headers, extensions=hop.extensions) as r:
                    if r.status_code == 304 and (etag or last_modified):
                        return Fetched(304, etag=etag, last_modified=last_modified)
                    if r.has_redirect_location:  # not `is_redirect`: that is every 3xx, a 304 too
                        current = urljoin(current, r.headers["location"])
                        continue
                    if r.status_code != 200:
                        raise FetchError(502, f"import URL answered {r.status_code}")
                    body = await _capped(r, max_bytes)
                    return Fetched(200, body, r.headers.get("etag", ""), r.headers.get("last-modified", ""))
            except httpx.HTTPError as exc:
                raise FetchError(502, f"import URL could not be fetched: {type(exc).__name__}") from None
    raise FetchError(400, "too many redirects")


async def _capped(response: httpx.Response, max_bytes: int) -> bytes:
    """The body, FetchError(413) as soon as it is over `max_bytes` (declared or received)."""
    declared = int(response.headers.get("content-length") or 0)
    if declared > max_bytes:
        raise FetchError(413, f"import list larger than {max_bytes} bytes")
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(413, f"import list larger than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
