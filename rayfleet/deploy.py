"""Deploying serve.yaml onto a Ray cluster and waiting until every app answers.

Used by `rayfleet up` and by the tier-3 test fixture, so the tests exercise the
exact path users run.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import httpx
import yaml

from rayfleet.catalog import PLATFORM, application
from rayfleet.paths import home as project_home


def read_serve_config(path: str | Path = "serve.yaml") -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def _module_exists(import_path: str) -> bool:
    module = import_path.split(":", 1)[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def select_applications(config: dict[str, Any], only: Iterable[str] | None = None) -> dict[str, Any]:
    """Keep the applications that are built (their module imports) and, if given, named in `only`
    (the platform's own applications, the console, whatever `only` says)."""
    wanted = set(only) | set(PLATFORM) if only else None
    out = copy.deepcopy(config)
    out["applications"] = [
        app
        for app in config.get("applications", [])
        if (wanted is None or app["name"] in wanted) and _module_exists(app["import_path"])
    ]
    return out


def prepare(
    config: dict[str, Any],
    env_vars: dict[str, str],
    home: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
) -> dict[str, Any]:
    """Resolve config paths against `home`, pass `env_vars` to every replica, set HTTP options."""
    base = (home or project_home()).resolve()
    out = copy.deepcopy(config)
    out.setdefault("http_options", {}).update({"host": host, "port": port})
    for app in out.get("applications", []):
        args = app.setdefault("args", {})
        for key, value in list(args.items()):
            if key.endswith(("config", "_path", "_dir")) and isinstance(value, str) and not os.path.isabs(value):
                args[key] = str(base / value)
        _override_direct_port(app)
        runtime_env = app.setdefault("runtime_env", {})
        merged = {"RAYFLEET_HOME": str(base), **env_vars, **runtime_env.get("env_vars", {})}
        runtime_env["env_vars"] = merged
    return out


def direct_port_env(name: str) -> str:
    """The environment variable overriding an application's direct port (``RAYFLEET_<NAME>_DIRECT_PORT``)."""
    return f"RAYFLEET_{name.upper()}_DIRECT_PORT"


def _override_direct_port(app: dict[str, Any]) -> None:
    direct = app.get("args", {}).get("direct")
    value = os.environ.get(direct_port_env(app["name"]))
    if not direct or not value:
        return
    if isinstance(direct, dict):
        direct["port"] = int(value)
    else:
        app["args"]["direct"] = int(value)


def direct_spec(app: dict[str, Any]) -> Any:
    """An application's `DirectSpec`: its deployment module's ``direct(args)`` if it has one
    (a port from the component's own config), else serve.yaml ``args.direct``."""
    import importlib

    from rayfleet.direct import DirectSpec

    args = app.get("args", {})
    module = importlib.import_module(app["import_path"].split(":", 1)[0])
    hook = getattr(module, "direct", None)
    return hook(args) if callable(hook) else DirectSpec.from_args(args.get("direct"))


def direct_urls(config: dict[str, Any]) -> dict[str, str]:
    """application → its direct URL; ``{node}`` stands for each node's address (host ``node``
    or a wildcard), which `rayfleet status` fills in from the nodes running the replicas."""
    out = {}
    for app in config.get("applications", []):
        spec = direct_spec(app)
        if spec is not None:
            host = "{node}" if spec.host in ("node", "0.0.0.0", "::", "") else spec.host
            out[app["name"]] = f"{spec.scheme}://{host}:{spec.port}"
    return out


def deploy(config: dict[str, Any]) -> list[str]:
    """Start Serve (HTTP options from `config`) and apply every application. Ray must be initialised."""
    from ray.serve._private import api as serve_api
    from ray.serve.config import ProxyLocation
    from ray.serve.schema import ServeDeploySchema

    schema = ServeDeploySchema.model_validate(config)
    client = serve_api.serve_start(
        http_options=schema.http_options.model_dump(),
        proxy_location=schema.proxy_location or ProxyLocation.EveryNode,
        controller_options=schema.controller_options,  # the proxy callback (rayfleet.serving)
    )
    client.deploy_apps(schema, _blocking=False)
    return [app.name for app in schema.applications]


def base_url(host: str, port: int | str) -> str:
    """Where Serve's HTTP proxy answers on this machine (a wildcard bind is reached on loopback)."""
    return f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"


def app_urls(base_url: str, names: Iterable[str]) -> dict[str, dict[str, str | None]]:
    """component → its base, health and docs URLs."""
    out: dict[str, dict[str, str | None]] = {}
    for name in names:
        comp = application(name)
        out[name] = {
            "url": comp.url(base_url, "/"),
            "health": comp.url(base_url, comp.health_path),
            "docs": comp.url(base_url, comp.docs_path) if comp.docs_path else None,
        }
    return out


def wait_healthy(
    base_url: str,
    names: Iterable[str],
    timeout: float = 180.0,
    interval: float = 0.5,
    stop: Callable[[], bool] = lambda: False,
) -> dict[str, int]:
    """Poll each app's health route until it answers 200 (or ``stop()``); returns the last status per app.

    Raises TimeoutError naming the apps that never answered, with Serve's view of them.
    """
    urls = app_urls(base_url, names)
    last: dict[str, int] = {n: 0 for n in urls}
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=5.0, trust_env=False) as client:
        while True:
            for name, u in urls.items():
                if last[name] == 200:
                    continue
                try:
                    last[name] = client.get(str(u["health"])).status_code
                except httpx.HTTPError:
                    last[name] = 0
            if all(code == 200 for code in last.values()) or stop():
                return last
            if time.monotonic() > deadline:
                pending = {n: c for n, c in last.items() if c != 200}
                raise TimeoutError(f"not healthy after {timeout:.0f}s: {pending}; {serve_status_summary()}")
            time.sleep(interval)


def serve_status_summary() -> str:
    """Serve's own status of every application (for error messages)."""
    try:
        from ray import serve

        status = serve.status()
        parts = []
        for name, app in status.applications.items():
            detail = app.message.strip().splitlines()[-1:] if app.message else []
            parts.append(f"{name}={app.status}{(': ' + detail[0]) if detail else ''}")
        return "serve: " + ", ".join(parts)
    except Exception as exc:  # status is best effort inside an error message
        return f"serve status unavailable: {exc}"
