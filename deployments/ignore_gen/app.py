"""HTTP surface of the ignore-file generator: create_app(config, state) -> FastAPI.

The routes live in `routes/` (one module per resource); they share `IgnoreGenState` (state.py).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from deployments.ignore_gen.config import IgnoreGenConfig
from deployments.ignore_gen.errors import INTERNAL_MESSAGE, ApiError, api_error, http_error, render, validation_error
from deployments.ignore_gen.routes import compat, generate, info, metrics
from deployments.ignore_gen.state import IgnoreGenState
from rayfleet.appstate import attach
from rayfleet.docs import use_local_docs_assets
from rayfleet.errors import install_error_handlers
from rayfleet.http import status_watcher


class RequestCounter:
    """Counts each answered request by method, route template and status (pure ASGI: a
    ``BaseHTTPMiddleware`` cost about a third of a trivial request's time in a profile)."""

    def __init__(self, app: Any, counter: Any) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send_counted, status = status_watcher(send)
        try:
            await self.app(scope, receive, send_counted)
        finally:
            if status():
                path = getattr(scope.get("route"), "path", "unmatched")
                self.counter.labels(method=scope["method"], route=path, status=str(status())).inc()


DESCRIPTION = """\
Generates ignore files from a project's file list or from feature names.

**Determinism.** The same inputs give byte-identical `content` and the same
`output_hash` (`sha256:` + hex of the UTF-8 content), whatever the order of
`tree`, `features` or `extras`. `ETag` is the quoted `output_hash`;
`If-None-Match` with it (strong, weak `W/"..."`, a list, or `*`) gives 304
with no body.

**Features.** Paths are fingerprinted by file name (case-insensitive, any
folder; `./` and `\\` normalised). `common` (OS/editor files) and `secrets`
(.env, private keys, key stores) are always added, also when `features`
bypasses fingerprinting. A requested feature without a template is 404.
`GET /features` lists them.

**Order.** Template rules, then mined rules (from the committed rules table),
then `extras`; first occurrence wins; negations last within each section.

**Diff set semantics.** `/diff_against` generates with the same `tree`,
`features` and `extras` and compares *sets of patterns*: the generated set is
every emitted pattern (templates, mined, extras); the existing set is every
line of `existing` after trimming, minus blank lines and `#` comments.
`added` = generated − existing, `removed` = existing − generated, each sorted
by code point, except that globs are understood: a pattern whose every match the
other side's patterns already ignore (`*.pyc` under `*.py[cod]`, `/build/` under
`build/`) is in neither list but in `covered` (`{pattern, side, by}`). Order and
duplicates in `existing` are ignored; `include_comments` and `include_provenance`
do not change the sets.

**Errors** are `{"detail": "<sentence>"}`: 400 when both `tree` and
`features` are missing, 404 for an unknown feature, 413 above a configured
limit, 422 for validation errors, 500 for internal errors.
"""


def create_app(config: IgnoreGenConfig, state: IgnoreGenState | None = None) -> FastAPI:
    """The generator's app (`IgnoreGenState.from_ray` by default)."""
    state = state or IgnoreGenState.from_ray(config)
    app = FastAPI(
        title="rayfleet ignore-file generator",
        version=state.service.engine.templates.version,
        description=DESCRIPTION,
        docs_url="/docs",
        openapi_url="/openapi.json",
    )
    attach(app, state)
    install_error_handlers(
        app,
        render,
        component="ignore_gen",
        handlers={ApiError: api_error},
        http=http_error,
        validation=validation_error,
        internal_message=INTERNAL_MESSAGE,
    )
    app.add_middleware(RequestCounter, counter=state.requests_total)
    for router in (info.router, generate.router, metrics.router, compat.router):
        app.include_router(router)
    use_local_docs_assets(app)
    return app
