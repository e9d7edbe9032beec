"""The fleet under Ray's own cluster autoscaler, on one machine (`rayfleet up --autoscale`).

Ray's cluster autoscaler (the ``monitor`` process on the head) adds a worker node when
tasks, actors or placement groups ask for resources no node has free, and removes a
worker that has been idle for ``idle_timeout_minutes``. On real machines its node
provider creates VMs (cluster.yaml); here Ray's fake multi-node provider
(``provider.type: fake_multinode``) does: a "node" is a raylet and its workers, started
by the monitor as local processes, with the resources its node type declares.

:class:`AutoscalingHead` starts such a head with ``ray start``: a GCS port of its own
(Redis holds 6379), written into the config as ``provider.gcs_address`` (the provider
would assume 6379), ``RAY_FAKE_CLUSTER=1`` and ``--autoscaling-config``. Replicas that
ask for the ``rayfleet_replica`` resource (:func:`needs_slots`) take a slot each; when
Serve wants more replicas than the head has slots, they wait, their demand reaches the
autoscaler, and a worker node appears.
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rayfleet.launcher import free_port
from rayfleet.logs import get_logger
from rayfleet.nodes import Node, start_node

log = get_logger("cluster_autoscaler")

AUTOSCALE_ENV = "RAYFLEET_AUTOSCALE"
DEFAULT_CONFIG = "config/cluster.autoscaling.yaml"
SLOT = "rayfleet_replica"
WORKER_MARK = "rayfleet_worker"
HEAD_IP = "127.0.0.2"
# how often the monitor looks at demand and idle nodes (Ray's default is 5 s)
UPDATE_INTERVAL_S = "1"


def load_config(path: str | Path) -> dict[str, Any]:
    """The cluster config at ``path``, checked for what `rayfleet up --autoscale` can run here."""
    with open(path, encoding="utf-8") as fh:
        config: dict[str, Any] = yaml.safe_load(fh) or {}
    provider = config.get("provider") or {}
    if provider.get("type") != "fake_multinode":
        raise ValueError(
            f"{path}: rayfleet up --autoscale runs Ray's fake multi-node provider (provider.type: "
            f"fake_multinode); for real machines use `ray up cluster.yaml`"
        )
    head_type = config.get("head_node_type", "")
    if head_type not in (config.get("available_node_types") or {}):
        raise ValueError(f"{path}: head_node_type {head_type!r} is not among available_node_types")
    return config


def head_resources(config: dict[str, Any]) -> tuple[int, dict[str, float]]:
    """The head's CPUs and its other resources, as its node type declares them."""
    resources = dict(config["available_node_types"][config["head_node_type"]].get("resources") or {})
    cpus = resources.pop("CPU", os.cpu_count() or 1)
    return int(cpus), {k: float(v) for k, v in resources.items()}


def monitor_env() -> dict[str, str]:
    """What the head's autoscaler (its ``monitor`` process) needs: the fake provider switched on,
    a quick update loop, and a metrics port of its own (Ray's fixed default, 44217, is taken by
    any other Ray cluster on the machine, and the monitor then runs without its metrics).

    The fake provider's worker nodes run on this machine, and Serve binds every node's proxy with
    SO_REUSEPORT: on the head's port, the kernel would hand some of the head's clients to a worker's
    proxy, and the autoscaler's removal of that worker would cut their requests. Workers' proxies
    get a port of their own (the nodes inherit this environment; Serve exempts the head)."""
    return {
        "RAY_FAKE_CLUSTER": "1",
        "AUTOSCALER_UPDATE_INTERVAL_S": UPDATE_INTERVAL_S,
        "AUTOSCALER_METRIC_PORT": str(free_port()),
        "RAY_SERVE_WORKER_PROXY_HTTP_PORT": str(free_port()),
    }


@dataclass
class AutoscalingHead:
    """A head node started with Ray's cluster autoscaler and the fake multi-node provider."""

    node: Node
    address: str
    config_path: Path

    @classmethod
    def start(cls, config_path: str | Path, env: dict[str, str]) -> AutoscalingHead:
        """Start the head (a short folder under /tmp: Ray's socket paths may not exceed 107 bytes)."""
        config = load_config(config_path)
        root = Path(tempfile.mkdtemp(prefix="rfas-", dir="/tmp"))
        port = free_port()
        config["provider"]["gcs_address"] = f"{HEAD_IP}:{port}"
        written = root / "autoscaling.yaml"
        written.write_text(yaml.safe_dump(config))
        cpus, resources = head_resources(config)
        try:
            node, address = start_node(
                "head",
                root,
                port=port,
                node_ip=HEAD_IP,
                num_cpus=cpus,
                resources=resources,
                env={**env, **monitor_env()},
                extra_args=[f"--autoscaling-config={written}"],
            )
        except Exception:
            shutil.rmtree(root, ignore_errors=True)
            raise
        log.info("head node with the cluster autoscaler", extra={"address": address, "config": str(config_path)})
        return cls(node, address, Path(config_path))

    def status(self) -> dict[str, object]:
        """For the state file and ``rayfleet status --json``."""
        return {
            "autoscaling": True,
            "config": str(self.config_path),
            "address": self.address,
            "folder": str(self.node.temp_dir),
        }

    def stop(self, forget: bool = False) -> None:
        """End the head and every node its autoscaler started (their processes name the head's folder).
        ``forget`` is accepted for `FaultTolerantHead.stop`'s sake: nothing of this head outlives it."""
        self.node.kill()
        shutil.rmtree(self.node.temp_dir.parent, ignore_errors=True)


def cluster_nodes() -> list[dict[str, Any]]:
    """Every live Ray node: id, address, resources, and whether it is an autoscaled worker."""
    import ray

    out = []
    for info in ray.nodes():  # type: ignore[no-untyped-call]
        if not info.get("Alive"):
            continue
        resources = {k: float(v) for k, v in (info.get("Resources") or {}).items() if not k.startswith("node:")}
        out.append(
            {
                "node_id": info["NodeID"],
                "ip": info.get("NodeManagerAddress", ""),
                "worker": WORKER_MARK in resources,
                "resources": resources,
            }
        )
    return sorted(out, key=lambda n: (n["worker"], n["node_id"]))


def needs_slots(serve_config: dict[str, Any], app: str, slots: float = 1.0) -> dict[str, Any]:
    """``serve_config`` with every replica of ``app`` asking for ``slots`` of :data:`SLOT`."""
    out = copy.deepcopy(serve_config)
    found = [a for a in out.get("applications", []) if a["name"] == app]
    if not found:
        raise ValueError(f"no application {app!r} in the Serve config")
    for deployment in found[0].get("deployments", []):
        options = deployment.setdefault("ray_actor_options", {})
        options["resources"] = {**(options.get("resources") or {}), SLOT: slots}
    return out


# Serve's side of the demonstration: quick to scale, so a test or a notebook sees it in minutes.
# Half a request in progress per replica: on a loaded 2-core machine the clients cannot keep
# many requests in flight, yet two in progress already ask for four replicas; one client
# alone (at most one in progress) stays within the two the head holds.
DEMO_AUTOSCALING = {
    "min_replicas": 2,
    "initial_replicas": 2,
    "max_replicas": 4,
    "target_ongoing_requests": 0.5,
    "upscale_delay_s": 2,
    "downscale_delay_s": 20,
    "look_back_period_s": 2,
    "metrics_interval_s": 0.5,
}


def demo_serve_config(serve_config: dict[str, Any], app: str = "ignore_gen") -> dict[str, Any]:
    """serve.yaml reduced to ``app`` (and the platform's console): its direct listener bound on each
    node's address, Serve autoscaling quick enough to watch (2 to 4 replicas), a slot per replica.
    The head's two slots hold the two replicas Serve keeps; a third and a fourth need a worker node."""
    from rayfleet.catalog import PLATFORM

    out = needs_slots(serve_config, app)
    out["applications"] = [a for a in out["applications"] if a["name"] == app or a["name"] in PLATFORM]
    chosen = next(a for a in out["applications"] if a["name"] == app)
    direct = chosen.get("args", {}).get("direct")
    if isinstance(direct, dict):
        direct["host"] = "node"
    elif direct:
        chosen["args"]["direct"] = {"port": int(direct), "host": "node"}
    for deployment in chosen.get("deployments", []):
        deployment.setdefault("autoscaling_config", {}).update(DEMO_AUTOSCALING)
    return out
