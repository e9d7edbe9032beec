"""The fleet console: the operators' page at Serve's root `/`.

One page (`static/`: HTML, a small script, a stylesheet; no CDN, no build step) that lists every
component with its health, replicas, nodes, URLs, docs and web UI, and the data planes' addresses,
refreshed every few seconds from `GET /api/status`: the same report as `rayfleet status --json`
(`rayfleet.status.fleet_report`), with the placement read from Ray by the console itself.

- `state.py`: `ConsoleState`, the fleet and where placement and probes come from, and the
  report it serves (rebuilt at most every `max_age` seconds, whoever asks);
- `routes.py`: the page, its assets, `/api/status` and `/api/health`;
- `app.py`: `create_app(fleet, state=None)`;
- `deployment.py`: the Serve binding (an application of its own in serve.yaml, route prefix `/`).
"""
