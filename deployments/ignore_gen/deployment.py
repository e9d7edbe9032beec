"""Ray Serve binding of the ignore-file generator (named in serve.yaml)."""

from __future__ import annotations

from rayfleet.serving import ingress_app


def build(args: dict):
    config_path = args.get("config", "config/ignore_gen.yaml")

    def factory():
        from deployments.ignore_gen.app import create_app
        from deployments.ignore_gen.config import load

        return create_app(load(config_path), state=None)

    return ingress_app("ignore_gen", factory, args)
