"""`rayfleet up | down | status`: run every built component on one Ray cluster."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from rayfleet import upstate
from rayfleet.cluster_autoscaler import AUTOSCALE_ENV, DEFAULT_CONFIG, AutoscalingHead
from rayfleet.gcs import FaultTolerantHead
from rayfleet.status import Fleet, FleetReport, all_healthy, hand_to_platform, probed_report

INGRESS_MODES = ("proxy", "haproxy")
FRONT_MODES = ("haproxy", "none")


def state_dir() -> Path:
    """Where `up` writes its state file and the demo secrets (`RAYFLEET_STATE_DIR`, default var/)."""
    from rayfleet.paths import home

    return Path(os.environ.get("RAYFLEET_STATE_DIR") or home() / "var")


def state_file() -> Path:
    return state_dir() / upstate.STATE_NAME


def _host_port() -> tuple[str, int]:
    return os.environ.get("RAYFLEET_HOST", "127.0.0.1"), int(os.environ.get("RAYFLEET_PORT", "8000"))


def _front_spec() -> Any:
    """The front's settings: ``RAYFLEET_FRONT_CONFIG``, default ``config/front.yaml``."""
    from rayfleet.front import FrontSpec
    from rayfleet.paths import home

    return FrontSpec.load(os.environ.get("RAYFLEET_FRONT_CONFIG") or home() / "config/front.yaml")


def _default_front() -> str:
    """``RAYFLEET_FRONT``, else the front config's ``enabled`` (HAProxy by default)."""
    if os.environ.get("RAYFLEET_FRONT"):
        return os.environ["RAYFLEET_FRONT"]
    return "haproxy" if _front_spec().enabled else "none"


def _start_front(args: argparse.Namespace, host: str, port: int, state: dict[str, Any]) -> tuple[Any, str, int]:
    """HAProxy on ``host:port`` in front of Serve, which moves to a loopback port of its own
    (`rayfleet.front`); returns (the front or None, Serve's host, Serve's port). Only with
    Serve's own proxy: in ``--ingress haproxy`` mode Serve's HAProxy holds the port."""
    from rayfleet.front import BACKEND_HOST, Front
    from rayfleet.launcher import free_port

    if args.front == "none" or args.ingress != "proxy":
        return None, host, port
    serve_port = free_port()
    # Serve's proxy takes the client address from X-Forwarded-For only when HAProxy (loopback) sent it;
    # HAProxy replaces whatever the client put there with the socket peer
    os.environ["FORWARDED_ALLOW_IPS"] = BACKEND_HOST
    front = Front(_front_spec(), (host, port), serve_port, state_dir())
    front.start()
    state["front_status"] = front.view()
    _write_state(state)
    return front, BACKEND_HOST, serve_port


def _apply_ingress_mode(mode: str) -> None:
    """Serve reads these at start: they must be in the environment before Ray starts.

    `proxy` (the default) keeps the client's socket address all the way to the
    replica. Serve's HAProxy ingress is faster here but forwards neither the
    client address nor an X-Forwarded-For header, and binds fixed stats/metrics
    ports, so per-client limits and audit logs would see only HAProxy.
    Uvicorn in the Serve proxy must not rewrite the client address from a
    client-supplied X-Forwarded-For either: components decide that themselves
    from their own trusted-proxy lists (`rayfleet.http.client_ip`).
    """
    os.environ.setdefault("FORWARDED_ALLOW_IPS", "")
    if mode == "haproxy":
        os.environ["RAY_SERVE_ENABLE_HA_PROXY"] = "1"
        os.environ["RAY_SERVE_ENABLE_DIRECT_INGRESS"] = "1"
        # Serve's HAProxy: only its client timeout is settable (default 3600 s); ours bounds it
        spec = _front_spec()
        os.environ.setdefault("RAY_SERVE_HAPROXY_TIMEOUT_CLIENT_S", str(max(1, round(spec.client_timeout))))
    else:
        os.environ.pop("RAY_SERVE_ENABLE_HA_PROXY", None)


def ray_auth(address: str | None, var: Path) -> str | None:
    """Token authentication for the cluster `up` starts or joins; returns the token file, if any.

    Ray 2.60 only sends a token when ``RAY_AUTH_MODE=token`` is set in the client's
    environment (a token in ``~/.ray/auth_token`` alone is not enough to join), and that
    file is per user, not per cluster. So: joining (``RAY_ADDRESS``) with
    ``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH`` set turns token mode on; a private
    cluster gets its own token in the state folder (mode 0600) unless the operator set
    ``RAY_AUTH_*`` already.
    """
    if os.environ.get("RAY_AUTH_MODE"):
        return os.environ.get("RAY_AUTH_TOKEN_PATH")
    if address:
        if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
            os.environ["RAY_AUTH_MODE"] = "token"
        return os.environ.get("RAY_AUTH_TOKEN_PATH")
    from rayfleet.nodes import write_token

    path = var / "ray_auth_token"
    if not path.exists():
        write_token(path)
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN_PATH"] = str(path)
    os.environ.pop("RAY_AUTH_TOKEN", None)
    return str(path)


def start_ray(address: str | None, num_cpus: int | None = None) -> None:
    """Join `address`, or start a private local cluster owned by this process."""
    import ray

    ray.init(
        address=address or "local",
        num_cpus=None if address else num_cpus,
        include_dashboard=False,
        log_to_driver=bool(os.environ.get("RAYFLEET_LOG_TO_DRIVER")),
        configure_logging=True,
        logging_level=logging.WARNING,
    )


def run_prestart_hooks(names: list[str], var: Path) -> None:
    """Start the demo dependencies some components need (e.g. the LXC host simulator)."""
    import importlib

    from rayfleet.catalog import COMPONENTS

    for name in names:
        hook = COMPONENTS[name].prestart if name in COMPONENTS else None
        if not hook:
            continue
        module, _, func = hook.partition(":")
        result = getattr(importlib.import_module(module), func)(var)
        if isinstance(result, dict) and "host" in result and "port" in result:
            print(f"{name}: demo dependency at {result['host']}:{result['port']}")


def _print_table(urls: dict[str, dict[str, str | None]], direct: dict[str, str]) -> None:
    rows = [("component", "URL", "direct", "docs")] + [
        (name, u["url"] or "", direct.get(name, "-").replace("{node}", "127.0.0.1"), u["docs"] or "-")
        for name, u in sorted(urls.items())
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def _print_data_planes(report: FleetReport) -> None:
    """Where the proxies the components run listen (Squid, dnsmasq, HAProxy: `rayfleet.status`)."""
    for name, c in report["components"].items():
        if c["data_planes"]:
            print(f"{name} data plane: " + ", ".join(f"{d['kind']} {d['address']}" for d in c["data_planes"]))
        for child in c["children"]:
            exit_note = f", last exit {child.get('last_exit_reason')}" if child.get("last_exit_reason") else ""
            print(f"{name} child {child['name']}: {child.get('state')}, {child.get('restarts', 0)} restarts{exit_note}")


def _gcs_address() -> str | None:
    """The cluster's GCS address (what `RAY_ADDRESS` must name to join it)."""
    try:
        import ray

        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # informational only
        return None


class _Stop(Exception):
    """SIGTERM/SIGINT while `up` runs: unwind and shut down what was started so far."""


class _StopFlag:
    """Set by SIGTERM/SIGINT; `up` checks it between its steps (never raised inside Ray's calls)."""

    def __init__(self) -> None:
        self.set = False

    def __call__(self, signum: int, frame: Any) -> None:
        self.set = True

    def check(self) -> None:
        if self.set:
            raise _Stop


def _initial_state(args: argparse.Namespace, base: str, names: list[str], secrets_path: Path) -> dict[str, Any]:
    """The state file as `up` first writes it (before anything starts)."""
    from rayfleet.catalog import PLATFORM

    return {
        "pid": os.getpid(),
        "phase": "starting",
        "base_url": base,
        "apps": [n for n in names if n not in PLATFORM],  # the components
        "platform": [n for n in names if n in PLATFORM],  # the console
        "ingress": args.ingress,
        "front": args.front if args.ingress == "proxy" else "none",
        "secrets": str(secrets_path),
        "started": time.time(),
    }


def cmd_up(args: argparse.Namespace) -> int:
    """Deploy, wait until healthy, then serve until `down` (SIGTERM) or Ctrl-C.

    The state file (with this pid) is written before anything starts, so a `down`
    sent while `up` is still deploying stops it, and everything started so far
    (Ray, Serve, the replicas and their direct listeners) is shut down.
    """
    from rayfleet import deploy
    from rayfleet.catalog import PLATFORM
    from rayfleet.paths import home
    from rayfleet.secrets import ensure_secrets

    project = home()
    os.environ["RAYFLEET_HOME"] = str(project)
    host, port = _host_port()
    secrets_path = state_dir() / "secrets.env"
    secrets = ensure_secrets(secrets_path)
    config = deploy.select_applications(deploy.read_serve_config(project / args.config), args.only)
    names = [a["name"] for a in config["applications"]]
    if not [n for n in names if n not in PLATFORM]:
        print("no built application in serve.yaml", file=sys.stderr)
        return 2
    base = deploy.base_url(host, port)
    state = _initial_state(args, base, names, secrets_path)
    _write_state(state)
    stop = _StopFlag()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    ray_started = False
    head: FaultTolerantHead | AutoscalingHead | None = None
    front = None
    try:
        run_prestart_hooks(names, state_dir())
        env_vars = dict(secrets)
        for passthrough in ("REDIS_URL", "DATABASE_URL", "RAYFLEET_LOG_LEVEL"):
            if os.environ.get(passthrough):
                env_vars[passthrough] = os.environ[passthrough]
        # where replicas reach sibling services through Serve (mitigation's demo origin, the ASN API)
        env_vars["RAYFLEET_HOST"], env_vars["RAYFLEET_PORT"] = host, str(port)
        _apply_ingress_mode(args.ingress)
        started = time.monotonic()
        front, serve_host, serve_port = _start_front(args, host, port, state)
        stop.check()
        ray_started = True
        head = _start_cluster(state, args.autoscale)
        stop.check()
        prepared = deploy.prepare(config, env_vars, project, serve_host, serve_port)
        fleet = Fleet.from_config(prepared, base, args.ingress)
        hand_to_platform(prepared, fleet)
        state["direct"] = fleet.direct
        _write_state(state)
        deploy.deploy(prepared)
        try:
            deploy.wait_healthy(base, names, timeout=args.timeout, stop=lambda: stop.set)
            stop.check()
        except TimeoutError as exc:
            print(f"rayfleet: {exc}", file=sys.stderr)
            return 1
        state["phase"] = "up"
        _write_state(state)
        print(f"rayfleet is up in {time.monotonic() - started:.1f}s ({args.ingress} ingress)")
        _announce(state, deploy.app_urls(base, names), fleet, secrets_path)
        _watch(state, stop, head, front)
    except _Stop:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("rayfleet: shutting down", flush=True)
        _shutdown(ray_started, joined=bool(os.environ.get("RAY_ADDRESS")))
        if head is not None:
            head.stop(forget=True)
        if front is not None:
            front.stop()
    return 0


def _start_cluster(state: dict[str, Any], autoscale: str | None = None) -> FaultTolerantHead | AutoscalingHead | None:
    """Join ``RAY_ADDRESS``; or start a head whose GCS keeps its tables in Redis
    (``RAYFLEET_GCS_REDIS``: it survives the GCS's death); or a head under Ray's cluster
    autoscaler (``autoscale``: a cluster config with the fake multi-node provider); or a
    private in-process cluster."""
    from rayfleet import gcs
    from rayfleet.paths import home

    joining = os.environ.get("RAY_ADDRESS")
    if autoscale and joining:
        raise SystemExit("rayfleet up: --autoscale starts its own head; unset RAY_ADDRESS")
    state["ray_auth_token_path"] = ray_auth(joining, state_dir())
    storage = None if joining or autoscale else gcs.storage_from_env()
    head: FaultTolerantHead | AutoscalingHead | None = None
    if storage is not None:
        head = gcs.FaultTolerantHead.start(storage, env={})
    elif autoscale:
        head = AutoscalingHead.start(home() / autoscale, env={})
    if head is not None:
        state["head"] = head.status()
    start_ray(head.address if head is not None else joining)
    state["ray_address"] = _gcs_address()
    return head


def _announce(state: dict[str, Any], urls: dict[str, dict[str, str | None]], fleet: Fleet, secrets: Path) -> None:
    """What `up` prints once everything is healthy."""
    _print_table(urls, state["direct"])
    _print_data_planes(asyncio.run(probed_report(fleet, {})))
    if state.get("head", {}).get("autoscaling"):
        print(f"head node: Ray's cluster autoscaler with {state['head']['config']} (fake multi-node provider)")
    elif "head" in state:
        head = state["head"]
        print(f"head node: GCS tables in Redis {head['redis']} (namespace {head['namespace']}), restarted if it dies")
    print(f"keys and tokens: {secrets} (mode 0600)")
    print("Ctrl-C (or `rayfleet down`) stops it.")
    sys.stdout.flush()


def _watch(
    state: dict[str, Any], stop: _StopFlag, head: FaultTolerantHead | AutoscalingHead | None = None, front: Any = None
) -> None:
    """Until stopped: refresh the state file with Serve's view (replicas, nodes), the head's GCS
    keeper's view when there is one, the live nodes under the autoscaler, and the front's (HAProxy)
    supervision, when a reader asks for it and otherwise every `upstate.IDLE_REFRESH_S`
    (`rayfleet.upstate`: Serve's status is too costly to poll for nobody)."""
    from rayfleet.cluster_autoscaler import cluster_nodes
    from rayfleet.placement import snapshot

    handled, last = 0, float("-inf")
    while not stop.set:
        request = upstate.asked(state_dir())
        if request <= handled and time.monotonic() - last < upstate.IDLE_REFRESH_S:
            time.sleep(upstate.REQUEST_POLL_S)
            continue
        handled, last = max(handled, request), time.monotonic()
        if head is not None:
            state["head"] = head.status()
        if front is not None:
            state["front_status"] = front.view()
        try:
            state["serve"] = snapshot(state["apps"])
            if isinstance(head, AutoscalingHead):
                state["nodes"] = cluster_nodes()
            state["serve_at"] = time.time()
        except Exception as exc:  # Ray busy or restarting: keep the last snapshot
            state["serve_error"] = f"{type(exc).__name__}: {exc}"
        state["refreshed_for"] = handled
        _write_state(state)


SERVE_SHUTDOWN_TIMEOUT = 60.0


def _shutdown(ray_started: bool = True, joined: bool = False) -> None:
    """Stop what `up` started: its private cluster, or its Serve applications on a joined one.

    A private cluster goes down whole with ``ray.shutdown`` (replicas and their direct
    listeners included). On a joined cluster (``RAY_ADDRESS``) the applications are
    removed with ``serve.shutdown``, which can wait forever while the controller is
    still starting (its graceful-shutdown call is retried without end), so it gets a
    bounded time in a helper thread.
    """
    import threading

    import ray

    try:
        if ray_started and joined and ray.is_initialized():
            from ray import serve

            worker = threading.Thread(target=serve.shutdown, daemon=True)
            worker.start()
            worker.join(SERVE_SHUTDOWN_TIMEOUT)
            if worker.is_alive():
                print(f"rayfleet: Serve did not shut down within {SERVE_SHUTDOWN_TIMEOUT:.0f}s", file=sys.stderr)
    finally:
        state_file().unlink(missing_ok=True)
        if ray.is_initialized():
            ray.shutdown()


def _write_state(state: dict[str, Any]) -> None:
    upstate.write(state_dir(), state)


def _read_state() -> dict[str, Any] | None:
    return upstate.read(state_dir())


def _alive(pid: int) -> bool:
    """Whether `pid` runs (an exited child its parent has not reaped yet counts as stopped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def cmd_down(args: argparse.Namespace) -> int:
    state = _read_state()
    if not state or not _alive(int(state["pid"])):
        print("rayfleet is not running")
        state_file().unlink(missing_ok=True)
        return 0
    pid = int(state["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        print(f"rayfleet (pid {pid}) did not stop within {args.timeout:.0f}s", file=sys.stderr)
        return 1
    print("rayfleet stopped")
    return 0


class StatusJson(FleetReport):
    """`rayfleet status --json` (``running`` aside): the fleet report, `up`'s pid and phase, the
    head node's GCS fault tolerance (``head``: Redis, namespace, the GCS's restarts and last exit)
    or its cluster autoscaler (``head.autoscaling``), the live nodes under the autoscaler, and the
    front (``front``: HAProxy's address, Serve's internal port, its supervision)."""

    pid: int
    phase: str
    head: dict[str, Any] | None
    nodes: list[dict[str, Any]] | None
    front: dict[str, Any] | None


def status_report(state: dict[str, Any]) -> StatusJson:
    """What `rayfleet status --json` prints: `rayfleet.status.fleet_report` of what `up` recorded
    (its placement snapshot included), with `up`'s pid and phase."""
    report = asyncio.run(probed_report(Fleet.from_state(state), state.get("serve") or {}, state.get("serve_at")))
    return {
        "pid": int(state["pid"]),
        "phase": str(state.get("phase", "up")),
        "head": state.get("head"),
        "nodes": state.get("nodes"),  # the live nodes, under the cluster autoscaler
        "front": state.get("front_status"),
        **report,
    }


def cmd_status(args: argparse.Namespace) -> int:
    state = _read_state()
    if not state or not _alive(int(state["pid"])):
        if args.json:
            print(json.dumps({"running": False}))
        else:
            print("rayfleet is not running")
        return 3
    state = upstate.fresh(state_dir()) or state  # a snapshot taken now, once the fleet is up
    report = status_report(state)
    worst = 0 if all_healthy(report) else 1
    if args.json:
        print(json.dumps({"running": True, **report}, indent=2))
        return worst
    print(f"rayfleet pid {report['pid']} at {report['base_url']} ({report['ingress']} ingress, {report['phase']})")
    for name, c in report["components"].items():
        nodes = ",".join(c["nodes"]) or "-"
        print(
            f"  {name:<12} {c['health']:<10} replicas={c['replicas'] if c['replicas'] is not None else '-'} "
            f"nodes={nodes}  {c['serve_url']}  direct={c['direct_url'] or '-'}"
        )
    if report["console_url"]:
        print(f"console: {report['console_url']}")
    if report["nodes"] is not None:
        nodes = ", ".join(f"{n['ip']} ({'worker' if n['worker'] else 'head'})" for n in report["nodes"])
        print(f"nodes under the cluster autoscaler: {nodes}")
    if report["front"]:
        front = report["front"]
        states = ",".join(f"{c['state']} restarts={c['restarts']}" for c in front["children"])
        print(f"front: {front['kind']} {front['address']} -> Serve 127.0.0.1:{front['serve_port']} ({states})")
    _print_data_planes(report)
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rayfleet", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start Ray (or join RAY_ADDRESS) and deploy serve.yaml")
    up.add_argument("--config", default="serve.yaml")
    up.add_argument("--only", nargs="*", help="deploy only these applications")
    up.add_argument("--ingress", choices=INGRESS_MODES, default=os.environ.get("RAYFLEET_INGRESS", "proxy"))
    up.add_argument(
        "--front",
        choices=FRONT_MODES,
        default=None,
        help="HAProxy on the public port, closing idle and slow clients (config/front.yaml); default: haproxy",
    )
    up.add_argument("--timeout", type=float, default=240.0)
    up.add_argument(
        "--autoscale",
        nargs="?",
        const=DEFAULT_CONFIG,
        default=os.environ.get(AUTOSCALE_ENV) or None,
        metavar="CLUSTER_YAML",
        help=f"start the head under Ray's cluster autoscaler (fake multi-node provider; default {DEFAULT_CONFIG})",
    )
    up.set_defaults(func=cmd_up)
    down = sub.add_parser("down", help="stop the running `rayfleet up`")
    down.add_argument("--timeout", type=float, default=60.0)
    down.set_defaults(func=cmd_down)
    status = sub.add_parser("status", help="show what runs and whether it is healthy")
    status.add_argument("--json", action="store_true", help="machine-readable: URLs, health, replicas, nodes")
    status.set_defaults(func=cmd_status)
    args = parser.parse_args(argv)
    if getattr(args, "front", "") is None:
        args.front = _default_front()
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
