"""Ray Serve binding of the LLM gateway (named in serve.yaml).

``args``: ``config`` (YAML path) and ``replicas`` (fixed replica count). The admission
limits of the config are cluster-wide: each replica takes an equal share.

Direct ingress: with ``server.listener.enabled`` every replica also serves the gateway
on ``server.host:server.port`` (``SO_REUSEPORT``, `rayfleet.direct`), with TLS when
``server.tls.enabled`` (``cert_file``, ``key_file``, ``min_version``). Both paths run in
the same app object, so keys, limits, breakers, budget and metrics are shared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rayfleet.direct import DirectSpec
from rayfleet.serving import ingress_app

if TYPE_CHECKING:  # the Serve controller imports this module: no heavy imports at run time
    from fastapi import FastAPI

    from deployments.llm_gateway.config import GatewayConfig


def direct(args: dict[str, Any]) -> DirectSpec | None:
    """The gateway's direct listener, from its config's ``server`` section (None when disabled)."""
    from deployments.llm_gateway.config import load

    return direct_spec(load(args.get("config", "config/llm_gateway.yaml")))


def direct_spec(config: GatewayConfig) -> DirectSpec | None:
    """``server.listener.enabled``: ``server.host:server.port``, TLS from ``server.tls``."""
    server = config.server
    if not server.listener.enabled:
        return None
    tls = server.tls
    return DirectSpec(
        port=server.port,
        host=server.host,
        tls_cert=tls.cert_file if tls.enabled else "",
        tls_key=tls.key_file if tls.enabled else "",
        tls_min_version=tls.min_version,
        keep_alive=server.keep_alive,
    )


def build(args: dict[str, Any]) -> Any:
    config_path = args.get("config", "config/llm_gateway.yaml")
    replicas = int(args.get("replicas", 1))
    spec = direct(args)

    def factory() -> FastAPI:
        from deployments.llm_gateway.app import create_app
        from deployments.llm_gateway.config import load
        from rayfleet.direct import ActiveView

        config = load(config_path)
        return create_app(config, state=None, replicas=replicas, listener=ActiveView() if spec else None)

    return ingress_app("llm_gateway", factory, args, direct=spec, num_replicas=replicas, max_ongoing_requests=1000)
