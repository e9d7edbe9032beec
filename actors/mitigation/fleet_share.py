"""What every node of a fleet must enforce, handed to a node as it starts.

A node given its fleet's share renders it into its first HAProxy configuration and map files, so
the data plane never listens without the fleet's bans, allowlist, rules and policy. Handing them
over through the runtime API once HAProxy listens would leave a window in which a banned source
is served.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FleetShare:
    changes: dict[str, Any] = field(default_factory=dict)  # settings the fleet's policy changed
    geo: dict[str, list[str]] | None = None  # the policy's geo prefixes ({}: removed; None: never set)
    rules: list[dict[str, Any]] = field(default_factory=list)  # fleet-wide rules (id, pattern, action, severity)
    allow: list[dict[str, Any]] = field(default_factory=list)  # the fleet's allowlist (ip, reason)
    bans: list[dict[str, Any]] = field(default_factory=list)  # fleet-wide bans (ip, reason, expires: Unix seconds)
