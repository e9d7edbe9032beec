"""The stages of the request rings, one module per ring, each stage an object holding only what it uses.

``ingress`` (auth, client rate limit, admission), ``preflight`` (body limits, model
resolution, cache check, budget guard), ``routing`` (forwarding and stream settlement),
``postflight`` (charging) and ``background`` (records, audit, export, telemetry, the trace).
The security stages (panic, threat ledger, injection scan, links) are ``security.SecurityStages``.
``pipeline.build`` orders them into the rings; ``state.GatewayState.from_ray`` builds them.
"""
