"""The named actor that owns the data plane: one Squid and one dnsmasq for every replica.

Squid and dnsmasq are supervised children (`rayfleet.supervisor`): a child that dies is restarted on
the same port with the policy last applied. They die with this actor's process (PR_SET_PDEATHSIG and
the data plane's watchdog), so stopping the Ray cluster (or the test process, for the in-process
stand-in) leaves nothing running; a restarted actor ends what its predecessor left and takes the same
port. Calls are serialised like any actor's, so reconfigurations never interleave.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import urllib.request
from pathlib import Path
from typing import Any

from actors.webfilter.dataplane import DataPlane, PlaneStatus, ProxySettings
from actors.webfilter.squidconf import Policy
from actors.webfilter.tlsfiles import tls_capable
from rayfleet.logs import get_logger

log = get_logger("webfilter.proxy")


class ProxyOwner:
    def __init__(self, root: str, settings: ProxySettings) -> None:
        """A restarted actor (Ray restarts it after its process died) starts the data plane at once with the
        policy its predecessor last applied (`policy.json`), rather than waiting for the next edit."""
        self.plane = DataPlane(Path(root), settings)
        self._saved = Path(root) / "policy.json"
        with contextlib.suppress(OSError, ValueError, TypeError):
            last = Policy(**json.loads(self._saved.read_text()))
            try:
                self.plane.start(last)
            except Exception as exc:  # the next ensure or apply tries again, and reports
                log.error("could not restart the data plane with the saved policy", extra={"error": repr(exc)})

    def _save(self, policy: Policy) -> None:
        tmp = self._saved.with_name(self._saved.name + ".tmp")
        tmp.write_text(json.dumps(dataclasses.asdict(policy)))
        os.replace(tmp, self._saved)

    def ensure(self, policy: Policy) -> PlaneStatus:
        """Start the data plane if it was not started, else apply `policy`; returns the status. (A child that
        died is its supervisor's to restart, not this call's.)"""
        if self.plane.supervisor is None:
            status = self.plane.start(policy)
        else:
            self.plane.apply(policy)
            status = self.plane.status()
        self._save(policy)
        return status

    def apply(self, policy: Policy) -> dict[str, Any]:
        if self.plane.supervisor is None:
            return self.ensure(policy)["last_apply"] or {"changed": True, "started": True}
        applied = self.plane.apply(policy)
        self._save(policy)
        return applied

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
