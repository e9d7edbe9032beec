"""Shared state of the container management API: per-host container locks and VMID reservations,
and the jobs of long operations.

``rayfleet.state.actor`` turns each plain class into a named Ray actor (or an
in-process stand-in for tier-1 tests).
"""

from actors.lxc.jobs import JobBook
from actors.lxc.locks import HostLocks

__all__ = ["HostLocks", "JobBook"]
