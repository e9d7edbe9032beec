"""Ray Serve binding of the ASN lookup API (named in serve.yaml)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from rayfleet.serving import ingress_app


def build(args: dict[str, Any]) -> Any:
    config_path = args.get("config", "config/asn.yaml")

    def factory() -> FastAPI:
        from deployments.asn.app import create_app
        from deployments.asn.config import load

        return create_app(load(config_path))

    return ingress_app("asn", factory, args)
