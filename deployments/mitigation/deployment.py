"""Ray Serve binding of the mitigation fleet (named in serve.yaml)."""

from __future__ import annotations

from rayfleet.serving import ingress_app


def build(args: dict):
    config_path = args.get("config", "config/mitigation.yaml")

    def factory():
        from deployments.mitigation.app import create_app
        from deployments.mitigation.config import load

        return create_app(load(config_path), state=None)

    return ingress_app("mitigation", factory, args)
