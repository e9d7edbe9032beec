"""Binding a component's ASGI app into a Ray Serve application.

The app factory runs inside each replica (Serve's ingress builder), so the
controller never imports a component's heavy dependencies and every replica
builds its own clients and connection pools. A component with a direct port
(``direct``: a `rayfleet.direct.DirectSpec`) also serves the same app object on
that port from every replica (`rayfleet.direct`, docs/ingress.md).

One request id per answer: every app gets a `rayfleet.http.RequestIdMiddleware` (the
component's own, with its id format, or the default one added here), which sets
``X-Request-ID`` on both paths. Serve's proxy appends an id of its own to every answer;
``proxy_middlewares`` (the proxy callback serve.yaml names in ``controller_options``)
keeps the first one, the app's.

One body cap for every app: `rayfleet.errors.install_body_cap` with serve.yaml's
``args.max_body_bytes`` (default `DEFAULT_MAX_BODY_BYTES`) refuses a larger body with
413 in the component's error shape, on both paths, whether the body declares its length
or is chunked; a component's own tighter caps apply inside it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rayfleet.direct import DirectSpec
from rayfleet.http import FirstRequestIdMiddleware, RequestIdMiddleware

DEFAULT_REPLICA_CPUS = 0.05
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
"""The platform's body cap when serve.yaml's ``args.max_body_bytes`` does not set one."""
PROXY_CALLBACK = "rayfleet.serving:proxy_middlewares"
"""Import path of the Serve proxy callback (``RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH``)."""


def ingress_app(
    name: str,
    factory: Callable[[], Any],
    args: dict[str, Any] | None = None,
    *,
    direct: DirectSpec | None = None,
    **deployment_options: Any,
) -> Any:
    """A Serve application whose ingress deployment `name` serves `factory()`.

    Options given here are defaults; the application's ``deployments:`` entry in
    serve.yaml overrides them (replicas, autoscaling, CPUs). ``direct`` defaults to
    ``args["direct"]`` (serve.yaml).
    """
    from ray import serve

    if direct is None:
        direct = DirectSpec.from_args((args or {}).get("direct"))
    options: dict[str, Any] = {
        "name": name,
        "ray_actor_options": {"num_cpus": DEFAULT_REPLICA_CPUS},
        "max_ongoing_requests": 256,
    }
    options.update(deployment_options)
    base: type = _DirectIngress if direct else object

    class Ingress(base):  # type: ignore[misc]
        """Replica wrapper; the routes are the ASGI app's."""

    Ingress.__name__ = Ingress.__qualname__ = f"{name.title().replace('_', '')}Ingress"
    max_body = int((args or {}).get("max_body_bytes", DEFAULT_MAX_BODY_BYTES))
    wrapped = serve.ingress(build_app(factory, direct, max_body))(Ingress)
    return serve.deployment(**options)(wrapped).bind()


class _DirectIngress:
    """Reports the replica's direct-listener load to Serve's autoscaler (`rayfleet.autoscaling`)."""

    def record_autoscaling_stats(self) -> dict[str, float]:
        from rayfleet import direct
        from rayfleet.autoscaling import DIRECT_METRIC

        server = direct.active()
        return {DIRECT_METRIC: float(server.ongoing if server else 0)}


class ReplicaHeaderMiddleware:
    """Adds ``x-rayfleet-replica`` to every response: which replica answered.

    Operators use it to see load spreading; the e2e tests use it to prove that
    cluster-wide state (metrics, rate limits) holds whichever replica answers.
    """

    def __init__(self, app: Any, replica: str) -> None:
        self.app = app
        self._value = replica.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_tagged(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*list(message.get("headers", [])), (b"x-rayfleet-replica", self._value)]
            await send(message)

        await self.app(scope, receive, send_tagged)


def replica_id() -> str:
    """This replica's id inside Serve, or ``local`` outside it."""
    try:
        from ray import serve

        return str(serve.get_replica_context().replica_id.unique_id)
    except Exception:
        return "local"


PROXY_BODY_SETTINGS = {
    "read_timeout": "RAYFLEET_PROXY_READ_TIMEOUT",
    "body_timeout": "RAYFLEET_PROXY_BODY_TIMEOUT",
    "min_rate": "RAYFLEET_PROXY_BODY_MIN_RATE",
}
"""`BodyPaceMiddleware`'s settings in Serve's proxy: environment variables (serve.yaml
``controller_options.runtime_env``), seconds and bytes per second; unset ones keep the defaults."""


def proxy_middlewares() -> list[Any]:
    """Middleware for Serve's HTTP proxy: a request body must keep coming (`BodyPaceMiddleware`,
    408 and the connection closed otherwise: Serve's uvicorn has no body timeout), and the
    replica's ``X-Request-ID`` wins over the proxy's."""
    import os

    from starlette.middleware import Middleware

    from rayfleet.http import BodyPaceMiddleware

    pace = {key: float(os.environ[env]) for key, env in PROXY_BODY_SETTINGS.items() if os.environ.get(env)}
    return [Middleware(BodyPaceMiddleware, **pace), Middleware(FirstRequestIdMiddleware)]


def with_request_ids(app: Any) -> Any:
    """``app`` with exactly one `RequestIdMiddleware`: its own if it has one, else the default."""
    if not any(m.cls is RequestIdMiddleware for m in app.user_middleware):
        app.add_middleware(RequestIdMiddleware)
    return app


def build_app(
    factory: Callable[[], Any], direct: DirectSpec | None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
) -> Callable[[], Any]:
    """What each replica runs to build its app: the component's app with the platform's
    request ids, body cap, replica header and (``direct``) direct listener."""
    from rayfleet.errors import install_body_cap

    def build() -> Any:
        app = with_request_ids(factory())
        install_body_cap(app, max_body_bytes)
        app.add_middleware(ReplicaHeaderMiddleware, replica=replica_id())
        if direct is not None:
            from rayfleet.direct import attach

            attach(app, direct)
        return app

    return build
