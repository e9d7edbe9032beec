"""Per-host container locks and VMID reservations (held in a named actor).

One instance per hypervisor host serialises operations on each container
across every replica: a caller takes a lease on the container ids it touches
and polls while another holder has them (methods never block, so the in-process
stand-in, which serialises calls, cannot deadlock). Leases lapse after their
TTL so a crashed replica cannot wedge a container forever. VMID reservations
close the window between `pvesh get /cluster/nextid` and `pct create`.
"""

from __future__ import annotations

import time


class HostLocks:
    def __init__(self) -> None:
        self._held: dict[str, tuple[str, float]] = {}
        self._reserved: dict[int, tuple[str, float]] = {}

    def _expire(self, now: float) -> None:
        self._held = {k: lease for k, lease in self._held.items() if lease[1] > now}
        self._reserved = {k: lease for k, lease in self._reserved.items() if lease[1] > now}

    def try_acquire(self, keys: list[str], owner: str, ttl: float) -> bool:
        """Take every key or none of them."""
        now = time.monotonic()
        self._expire(now)
        if any(k in self._held and self._held[k][0] != owner for k in keys):
            return False
        for key in keys:
            self._held[key] = (owner, now + ttl)
        return True

    def release(self, keys: list[str], owner: str) -> None:
        for key in keys:
            if key in self._held and self._held[key][0] == owner:
                del self._held[key]

    def holders(self) -> dict[str, str]:
        self._expire(time.monotonic())
        return {k: owner for k, (owner, _) in self._held.items()}

    def reserve_vmid(self, vmid: int, owner: str, ttl: float) -> bool:
        now = time.monotonic()
        self._expire(now)
        if vmid in self._reserved and self._reserved[vmid][0] != owner:
            return False
        self._reserved[vmid] = (owner, now + ttl)
        return True

    def reserved(self) -> list[int]:
        self._expire(time.monotonic())
        return sorted(self._reserved)

    def release_vmid(self, vmid: int, owner: str) -> None:
        if vmid in self._reserved and self._reserved[vmid][0] == owner:
            del self._reserved[vmid]
