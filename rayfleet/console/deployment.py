"""Ray Serve binding of the fleet console (its own application at route prefix `/` in serve.yaml)."""

from __future__ import annotations

import os
from typing import Any

from rayfleet.serving import ingress_app
from rayfleet.status import Fleet, FleetArgs


def discovered_fleet() -> Fleet:
    """Without ``args.fleet`` (`serve deploy serve.yaml` rather than `rayfleet up`): the project's
    serve.yaml, its built applications, on the Serve port of this node's environment."""
    from rayfleet import deploy
    from rayfleet.paths import home

    config = deploy.select_applications(deploy.read_serve_config(home() / "serve.yaml"))
    base = deploy.base_url(os.environ.get("RAYFLEET_HOST", "127.0.0.1"), os.environ.get("RAYFLEET_PORT", "8000"))
    return Fleet.from_config(config, base)


def build(args: dict[str, Any]) -> Any:
    fleet_args: FleetArgs | None = args.get("fleet")

    def factory() -> Any:
        from rayfleet.console.app import create_app

        return create_app(Fleet.from_args(fleet_args) if fleet_args else discovered_fleet())

    return ingress_app("console", factory, args)
