"""Ray Serve binding of the ignore-file generator (named in serve.yaml)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from rayfleet.serving import ingress_app


def build(args: dict[str, Any]) -> Any:
    config_path = args.get("config", "config/ignore_gen.yaml")

    def factory() -> FastAPI:
        import gc

        from deployments.ignore_gen.app import create_app
        from deployments.ignore_gen.config import load

        app = create_app(load(config_path))
        # What is loaded now (framework, tables, templates) lives as long as the replica:
        # moved out of the collector's generations, so a full collection during a request
        # does not walk it.
        gc.freeze()
        return app

    return ingress_app("ignore_gen", factory, args)
