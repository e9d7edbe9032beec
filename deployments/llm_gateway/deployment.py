"""Ray Serve binding of the LLM gateway (named in serve.yaml).

``args``: ``config`` (YAML path) and ``replicas`` (fixed replica count). The admission
limits of the config are cluster-wide: each server takes an equal share, where the
servers are the Serve replicas plus the direct listener when ``server.listener.enabled``.
Each replica makes sure the listener actor exists (idempotent: a named actor).
"""

from __future__ import annotations

from rayfleet.serving import ingress_app


def build(args: dict):
    config_path = args.get("config", "config/llm_gateway.yaml")
    replicas = int(args.get("replicas", 1))

    def factory():
        from deployments.llm_gateway.app import create_app
        from deployments.llm_gateway.config import load
        from deployments.llm_gateway.listener import ListenerWatch

        config = load(config_path)
        servers = replicas + (1 if config.server.listener.enabled else 0)
        watch = None
        if config.server.listener.enabled:
            watch = ListenerWatch(config, servers, interval=config.server.listener.poll_interval)
        return create_app(config, state=None, replicas=servers, listener=watch)

    return ingress_app("llm_gateway", factory, args, num_replicas=replicas, max_ongoing_requests=1000)
