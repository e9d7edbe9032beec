"""Tests never ask the machine's resolver: a name lookup in the test process is refused.

The rule of the work is that tests send traffic only to loopback or to namespaces they create;
a generated host name (a fuzzed import URL, a registry base URL) looked up with `getaddrinfo`
would reach the machine's resolver. Installed for every test (tests/conftest.py): IP literals,
`localhost` (and `*.localhost`) and the machine's own name still resolve (from /etc/hosts);
anything else fails as an unknown name would (`socket.gaierror`), before any packet is sent
(after the IDNA encoding the real call does first, so a malformed name fails as it really would).
Child processes (Squid, dnsmasq, `rayfleet up`) are not covered: they are configured to
resolve through resolvers the tests start.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_REAL = socket.getaddrinfo


def _local(host: str) -> bool:
    name = host.rstrip(".").lower()
    if name in ("localhost", socket.gethostname().lower()) or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    return True


def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if isinstance(host, str):
        host.encode("idna")  # as the real call does first: a label over 63 characters is a UnicodeError
    if host is None or _local(host.decode() if isinstance(host, bytes) else str(host)):
        return _REAL(host, *args, **kwargs)
    raise socket.gaierror(socket.EAI_NONAME, f"tests never ask the machine's resolver (looked up {host!r})")
