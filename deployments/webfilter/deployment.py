"""Ray Serve binding of the web filter admin API (named in serve.yaml)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from rayfleet.serving import ingress_app


def build(args: dict[str, Any]) -> Any:
    config_path = args.get("config", "config/webfilter.yaml")

    def factory() -> FastAPI:
        from deployments.webfilter.app import create_app
        from deployments.webfilter.config import load

        return create_app(load(config_path), state=None)

    return ingress_app("webfilter", factory, args)
