"""`rayfleet up | down | status`: run every built component on one Ray cluster."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

INGRESS_MODES = ("proxy", "haproxy")


def state_dir() -> Path:
    """Where `up` writes its state file and the demo secrets (`RAYFLEET_STATE_DIR`, default var/)."""
    from rayfleet.paths import home

    return Path(os.environ.get("RAYFLEET_STATE_DIR") or home() / "var")


def state_file() -> Path:
    return state_dir() / "rayfleet.json"


def _host_port() -> tuple[str, int]:
    return os.environ.get("RAYFLEET_HOST", "127.0.0.1"), int(os.environ.get("RAYFLEET_PORT", "8000"))


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
    else:
        os.environ.pop("RAY_SERVE_ENABLE_HA_PROXY", None)


def start_ray(address: str | None, num_cpus: int | None = None) -> None:
    """Join `address`, or start a private local cluster owned by this process."""
    import ray

    ray.init(
        address=address or "local",
        num_cpus=None if address else num_cpus,
        include_dashboard=False,
        log_to_driver=bool(os.environ.get("RAYFLEET_LOG_TO_DRIVER")),
        configure_logging=True,
        logging_level="WARNING",
    )


def run_prestart_hooks(names: list[str], var: Path) -> None:
    """Start the demo dependencies some components need (e.g. the LXC host simulator)."""
    import importlib

    from rayfleet.catalog import COMPONENTS

    for name in names:
        hook = COMPONENTS.get(name).prestart if name in COMPONENTS else None
        if not hook:
            continue
        module, _, func = hook.partition(":")
        result = getattr(importlib.import_module(module), func)(var)
        if isinstance(result, dict) and "host" in result and "port" in result:
            print(f"{name}: demo dependency at {result['host']}:{result['port']}")


def _print_table(urls: dict[str, dict[str, str | None]]) -> None:
    rows = [("component", "URL", "docs")] + [
        (name, u["url"] or "", u["docs"] or "-") for name, u in sorted(urls.items())
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def cmd_up(args: argparse.Namespace) -> int:
    from rayfleet import deploy
    from rayfleet.paths import home
    from rayfleet.secrets import ensure_secrets

    project = home()
    os.environ["RAYFLEET_HOME"] = str(project)
    host, port = _host_port()
    secrets_path = state_dir() / "secrets.env"
    secrets = ensure_secrets(secrets_path)
    config = deploy.select_applications(deploy.read_serve_config(project / args.config), args.only)
    names = [a["name"] for a in config["applications"]]
    if not names:
        print("no built application in serve.yaml", file=sys.stderr)
        return 2
    run_prestart_hooks(names, state_dir())
    env_vars = dict(secrets)
    for passthrough in ("REDIS_URL", "DATABASE_URL", "RAYFLEET_LOG_LEVEL"):
        if os.environ.get(passthrough):
            env_vars[passthrough] = os.environ[passthrough]
    _apply_ingress_mode(args.ingress)
    started = time.monotonic()
    start_ray(os.environ.get("RAY_ADDRESS"))
    prepared = deploy.prepare(config, env_vars, project, host, port)
    deploy.deploy(prepared)
    base = f"http://{host if host not in ('0.0.0.0', '::') else '127.0.0.1'}:{port}"
    try:
        deploy.wait_healthy(base, names, timeout=args.timeout)
    except TimeoutError as exc:
        print(f"rayfleet: {exc}", file=sys.stderr)
        _shutdown()
        return 1
    urls = deploy.app_urls(base, names)
    _write_state(
        {
            "pid": os.getpid(),
            "base_url": base,
            "apps": names,
            "ingress": args.ingress,
            "secrets": str(secrets_path),
            "started": time.time(),
        }
    )
    print(f"rayfleet is up in {time.monotonic() - started:.1f}s ({args.ingress} ingress)")
    _print_table(urls)
    print(f"keys and tokens: {secrets_path} (mode 0600)")
    print("Ctrl-C (or `rayfleet down`) stops it.")
    sys.stdout.flush()
    stop = {"flag": False}

    def _on_signal(signum: int, frame: Any) -> None:
        stop["flag"] = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    while not stop["flag"]:
        time.sleep(0.5)
    print("rayfleet: shutting down Serve")
    _shutdown()
    return 0


def _shutdown() -> None:
    try:
        from ray import serve

        serve.shutdown()
    finally:
        import ray

        ray.shutdown()
        state_file().unlink(missing_ok=True)


def _write_state(state: dict[str, Any]) -> None:
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2))


def _read_state() -> dict[str, Any] | None:
    try:
        return json.loads(state_file().read_text())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


def cmd_status(args: argparse.Namespace) -> int:
    import httpx

    from rayfleet import deploy

    state = _read_state()
    if not state or not _alive(int(state["pid"])):
        print("rayfleet is not running")
        return 3
    print(f"rayfleet pid {state['pid']} at {state['base_url']} ({state.get('ingress')} ingress)")
    urls = deploy.app_urls(state["base_url"], state["apps"])
    worst = 0
    with httpx.Client(timeout=3.0, trust_env=False) as client:
        for name, u in sorted(urls.items()):
            try:
                code = client.get(u["health"]).status_code
            except httpx.HTTPError as exc:
                code, note = 0, type(exc).__name__
            else:
                note = "ok" if code == 200 else "unhealthy"
            worst = max(worst, 0 if code == 200 else 1)
            print(f"  {name:<12} {code or '-':>3} {note:<10} {u['url']}")
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rayfleet", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start Ray (or join RAY_ADDRESS) and deploy serve.yaml")
    up.add_argument("--config", default="serve.yaml")
    up.add_argument("--only", nargs="*", help="deploy only these applications")
    up.add_argument("--ingress", choices=INGRESS_MODES, default=os.environ.get("RAYFLEET_INGRESS", "proxy"))
    up.add_argument("--timeout", type=float, default=240.0)
    up.set_defaults(func=cmd_up)
    down = sub.add_parser("down", help="stop the running `rayfleet up`")
    down.add_argument("--timeout", type=float, default=60.0)
    down.set_defaults(func=cmd_down)
    status = sub.add_parser("status", help="show what runs and whether it is healthy")
    status.set_defaults(func=cmd_status)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
