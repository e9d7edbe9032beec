"""Where each application runs: Serve's status plus the nodes of its live replicas.

Read by `rayfleet up` (it is the Ray driver) every few seconds into the state file,
which `rayfleet status --json` prints; the multi-node test and bench read it too. The
fleet console, itself a Serve replica, reads it from Ray directly (`rayfleet.console`).
"""

from __future__ import annotations

from collections.abc import Iterable

from typing_extensions import TypedDict  # pydantic (the console's response model) needs it before 3.12

REPLICA_CLASS_PREFIX = "ServeReplica:"


def replica_nodes() -> dict[str, list[dict[str, str]]]:
    """application → one ``{"node_id", "ip"}`` per live replica actor (from the GCS actor table, which
    filters on the state itself: the table also keeps the cluster's dead actors, and `rayfleet up` asks
    every 2 s)."""
    import ray

    out: dict[str, list[dict[str, str]]] = {}
    for info in ray._private.state.actors(actor_state_name="ALIVE").values():
        cls = str(info.get("ActorClassName") or "")
        if not cls.startswith(REPLICA_CLASS_PREFIX) or info.get("State") != "ALIVE":
            continue
        app = cls[len(REPLICA_CLASS_PREFIX) :].split(":", 1)[0]
        address = info.get("Address") or {}
        out.setdefault(app, []).append({"node_id": address.get("NodeID", ""), "ip": address.get("IPAddress", "")})
    return out


class Placement(TypedDict):
    """Where one application runs: Serve's status, its running replicas and their nodes."""

    status: str
    replicas: int
    nodes: list[str]
    node_ids: list[str]


def snapshot(apps: Iterable[str]) -> dict[str, Placement]:
    """application → its `Placement` (replicas: the running ones)."""
    from ray import serve
    from ray.serve._private.common import ReplicaState

    status = serve.status().applications
    placed = replica_nodes()
    out: dict[str, Placement] = {}
    for name in apps:
        app = status.get(name)
        running = 0
        if app is not None:
            for dep in app.deployments.values():
                running += int(dep.replica_states.get(ReplicaState.RUNNING, 0))
        replicas = placed.get(name, [])
        out[name] = {
            # the enum's value (RUNNING): str() of Serve's str-enum reads "ApplicationStatus.RUNNING"
            "status": str(getattr(app.status, "value", app.status)) if app is not None else "NOT_DEPLOYED",
            "replicas": running,
            "nodes": sorted({r["ip"] for r in replicas}),
            "node_ids": sorted({r["node_id"] for r in replicas}),
        }
    return out
