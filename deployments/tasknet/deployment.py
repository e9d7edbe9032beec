"""Ray Serve binding of the task network (named in serve.yaml)."""

from __future__ import annotations

from rayfleet.serving import ingress_app


def build(args: dict):
    config_path = args.get("config", "config/tasknet.yaml")

    def factory():
        from deployments.tasknet.app import create_app
        from deployments.tasknet.config import load

        return create_app(load(config_path), state=None)

    return ingress_app("tasknet", factory, args)
