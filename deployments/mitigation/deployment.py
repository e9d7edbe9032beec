"""Ray Serve binding of the mitigation fleet (named in serve.yaml)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from rayfleet.serving import ingress_app


def build(args: dict[str, Any]) -> Any:
    config_path = args.get("config", "config/mitigation.yaml")

    def factory() -> FastAPI:
        from deployments.mitigation.app import create_app
        from deployments.mitigation.config import load

        return create_app(load(config_path), state=None)

    return ingress_app("mitigation", factory, args)
