"""Ray Serve binding of the LLM gateway (named in serve.yaml).

``args``: ``config`` (YAML path) and ``replicas`` (fixed replica count; the admission
limits of the config are cluster-wide and each replica takes ``1/replicas`` of them).
"""

from __future__ import annotations

from rayfleet.serving import ingress_app


def build(args: dict):
    config_path = args.get("config", "config/llm_gateway.yaml")
    replicas = int(args.get("replicas", 1))

    def factory():
        from deployments.llm_gateway.app import create_app
        from deployments.llm_gateway.config import load

        return create_app(load(config_path), state=None, replicas=replicas)

    return ingress_app("llm_gateway", factory, args, num_replicas=replicas, max_ongoing_requests=1000)
