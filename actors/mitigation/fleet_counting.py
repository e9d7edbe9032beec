"""Fleet-wide counting: per-source rates summed over every node, so a flood spread over the nodes
below each node's own `flood_rps` is still caught, and a source one node flagged is refused by all.

Each node reports its active sources (`MitigationNode.source_rates`: the stick table's
`http_req_rate(1s)`, or `conn_rate(1s)` in syn mode, and the flood flag); the fleet sums them at
every heartbeat and bans what crosses `fleet_flood_rps` through its fleet-wide blacklist.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FleetFlooder:
    ip: str
    rate: int  # summed over the nodes
    reason: str


def fleet_flooders(reports: dict[str, list[dict[str, object]]], threshold: int) -> list[FleetFlooder]:
    """The sources to ban fleet-wide from each node's report (`{node_id: [{ip, rate, flagged}]}`):
    those whose summed rate is above `threshold`, and those a node flagged as a flood."""
    totals: dict[str, int] = {}
    flagged_by: dict[str, str] = {}
    for node_id in sorted(reports):
        for row in reports[node_id]:
            ip = str(row["ip"])
            rate = row.get("rate", 0)
            totals[ip] = totals.get(ip, 0) + (rate if isinstance(rate, int) else 0)
            if row.get("flagged") and ip not in flagged_by:
                flagged_by[ip] = node_id
    out = []
    for ip, total in sorted(totals.items()):
        if ip in flagged_by:
            out.append(FleetFlooder(ip, total, f"flagged by {flagged_by[ip]} as a flood"))
        elif total > threshold:
            out.append(FleetFlooder(ip, total, f"fleet-wide flood: {total} requests/s over {len(reports)} nodes"))
    return out
