"""The named actor that owns the data plane: one Squid and one dnsmasq for every replica.

Squid and dnsmasq are supervised children (`rayfleet.supervisor`): a child that dies is restarted on
the same port with the policy last applied. They die with this actor's process (PR_SET_PDEATHSIG and
the data plane's watchdog), so stopping the Ray cluster (or the test process, for the in-process
stand-in) leaves nothing running; a restarted actor ends what its predecessor left and takes the same
port. Calls are serialised like any actor's, so reconfigurations never interleave.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

from actors.webfilter.dataplane import DataPlane, PlaneStatus, ProxySettings
from actors.webfilter.squidconf import Policy
from actors.webfilter.tlsfiles import tls_capable


class ProxyOwner:
    def __init__(self, root: str, settings: ProxySettings) -> None:
        self.plane = DataPlane(Path(root), settings)

    def ensure(self, policy: Policy) -> PlaneStatus:
        """Start the data plane if it was not started, else apply `policy`; returns the status. (A child that
        died is its supervisor's to restart, not this call's.)"""
        if self.plane.supervisor is None:
            return self.plane.start(policy)
        self.plane.apply(policy)
        return self.plane.status()

    def apply(self, policy: Policy) -> dict[str, Any]:
        if self.plane.supervisor is None:
            return self.ensure(policy)["last_apply"] or {"changed": True, "started": True}
        return self.plane.apply(policy)

    def status(self) -> PlaneStatus:
        return self.plane.status()

    def tls_capable(self) -> bool:
        """Whether the installed Squid can bump TLS (OpenSSL build with its certificate generator)."""
        return tls_capable(self.plane.config.squid_bin, self.plane.config.certgen_bin)

    def reconfigure(self) -> PlaneStatus:
        self.plane.reconfigure()
        return self.plane.status()

    def reload_dns(self) -> bool:
        return self.plane.reload_dns()

    def restart(self) -> PlaneStatus:
        return self.plane.restart_squid()

    def manager(self, action: str) -> str:
        """Text of a cache manager page (`info`, `counters`, ...) from Squid on loopback."""
        if not self.plane.running():
            raise RuntimeError("squid is not running")
        url = f"http://127.0.0.1:{self.plane.port}/squid-internal-mgr/{action}"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=5) as response:
            return str(response.read(1_000_000).decode("utf-8", "replace"))

    def stop(self) -> None:
        self.plane.stop()
