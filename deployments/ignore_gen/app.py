"""HTTP surface of the ignore-file generator: create_app(config, state) -> FastAPI."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

from deployments.ignore_gen.config import IgnoreGenConfig
from deployments.ignore_gen.engine import CORE_VERSION, Engine, Generated, Options, UnknownFeatureError
from deployments.ignore_gen.errors import ApiError, install
from deployments.ignore_gen.fingerprint import ALWAYS
from deployments.ignore_gen.models import (
    DiffRequest,
    DiffResponse,
    ErrorResponse,
    FeatureInfo,
    FeaturesResponse,
    GenerateOptions,
    GenerateRequest,
    GenerateResponse,
    HealthResponse,
    VersionResponse,
)
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from rayfleet.docs import use_local_docs_assets
from rayfleet.etag import none_match, quote
from rayfleet.http import status_watcher
from rayfleet.logs import get_logger
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE, Metrics


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
by code point. Order and duplicates in `existing` are ignored;
`include_comments` and `include_provenance` do not change the sets.

**Errors** are `{"detail": "<sentence>"}`: 400 when both `tree` and
`features` are missing, 404 for an unknown feature, 413 above a configured
limit, 422 for validation errors, 500 for internal errors.
"""

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "both `tree` and `features` missing"},
    404: {"model": ErrorResponse, "description": "unknown feature with no template"},
    413: {"model": ErrorResponse, "description": "a configured limit exceeded"},
    422: {"model": ErrorResponse, "description": "validation error"},
}


class Service:
    """Engine plus the request checks that need configuration."""

    def __init__(self, config: IgnoreGenConfig) -> None:
        self.config = config
        self.engine = Engine(load_templates(config.templates_dir), load_rules_table(config.rules_table))

    def check_limits(self, body: GenerateOptions) -> None:
        lim = self.config.limits
        if body.tree is not None:
            if len(body.tree) > lim.max_tree_paths:
                raise ApiError(413, f"tree has {len(body.tree)} paths; the limit is {lim.max_tree_paths}")
            longest = max(map(len, body.tree), default=0)
            if longest > lim.max_path_length:
                raise ApiError(413, f"a tree path has {longest} characters; the limit is {lim.max_path_length}")
        if body.features is not None and len(body.features) > lim.max_features:
            raise ApiError(413, f"{len(body.features)} features; the limit is {lim.max_features}")
        if len(body.extras) > lim.max_extras:
            raise ApiError(413, f"{len(body.extras)} extras; the limit is {lim.max_extras}")
        for extra in body.extras:
            if len(extra) > lim.max_pattern_length:
                raise ApiError(
                    422, f"an extra pattern has {len(extra)} characters; the limit is {lim.max_pattern_length}"
                )

    def options(self, body: GenerateOptions) -> Options:
        if body.tree is None and body.features is None:
            raise ApiError(400, "either 'tree' (file paths) or 'features' (feature names) is required")
        self.check_limits(body)
        return Options(body.include_comments, body.include_provenance, tuple(body.extras))

    def generate(self, body: GenerateOptions) -> Generated:
        options = self.options(body)
        try:
            return self.engine.generate(body.tree, body.features, options)
        except UnknownFeatureError as exc:
            raise ApiError(404, str(exc)) from None

    def diff(self, body: DiffRequest) -> tuple[list[str], list[str]]:
        options = self.options(body)
        size = len(body.existing.encode("utf-8"))
        if size > self.config.limits.max_existing_bytes:
            raise ApiError(413, f"existing is {size} bytes; the limit is {self.config.limits.max_existing_bytes}")
        try:
            return self.engine.diff(body.existing, body.tree, body.features, options)
        except UnknownFeatureError as exc:
            raise ApiError(404, str(exc)) from None


def _headers(result: Generated) -> dict[str, str]:
    return {
        "ETag": quote(result.output_hash),
        "X-Core-Version": result.core_version,
        "X-Rules-Version": result.rules_table_version,
    }


def create_app(config: IgnoreGenConfig, state: Any = None) -> FastAPI:
    """The generator's app. `state` is unused: the service keeps no shared state;
    request counters go to the platform's metrics hub."""
    log = get_logger("ignore_gen")
    service = Service(config)
    metrics = Metrics("ignore_gen")
    requests_total = metrics.counter(
        "ignore_gen_requests_total", "Requests by route and status", ("method", "route", "status")
    )
    app = FastAPI(
        title="rayfleet ignore-file generator",
        version=service.engine.templates.version,
        description=DESCRIPTION,
        docs_url="/docs",
        openapi_url="/openapi.json",
    )
    install(app, log)

    app.add_middleware(RequestCounter, counter=requests_total)

    @app.get("/healthz", response_model=HealthResponse, summary="Liveness (always 200)")
    async def healthz() -> HealthResponse:
        return HealthResponse(status="ok")

    @app.get("/version", response_model=VersionResponse, summary="Core and rules-table versions")
    async def version() -> VersionResponse:
        return VersionResponse(
            core_version=CORE_VERSION,
            rules_table_version=service.engine.table.version,
            templates_version=service.engine.templates.version,
        )

    @app.get("/features", response_model=FeaturesResponse, summary="Known features")
    async def features() -> FeaturesResponse:
        tpl = service.engine.templates
        return FeaturesResponse(
            features=[
                FeatureInfo(name=n, description=tpl.descriptions[n], patterns=len(tpl.patterns[n]), always=n in ALWAYS)
                for n in tpl.names()
            ]
        )

    @app.post(
        "/generate",
        response_model=GenerateResponse,
        responses={**ERRORS, 304: {"description": "`If-None-Match` matched the ETag; no body"}},
        summary="Generate an ignore file",
    )
    async def generate(body: GenerateRequest, request: Request) -> Response:
        result = service.generate(body)
        headers = _headers(result)
        if none_match(request.headers.get("if-none-match"), result.output_hash):
            return Response(status_code=304, headers=headers)
        payload = {
            "content": result.content,
            "output_hash": result.output_hash,
            "rules_table_version": result.rules_table_version,
            "core_version": result.core_version,
            "templates_version": result.templates_version,
            "rules": [r.as_dict() for r in result.rules],
            "features": [{"name": n, "witness": result.fingerprint.witnesses[n]} for n in result.features],
        }
        return JSONResponse(payload, headers=headers)

    @app.post(
        "/diff_against",
        response_model=DiffResponse,
        responses=ERRORS,
        summary="Patterns to add to / remove from an existing ignore file",
    )
    async def diff_against(body: DiffRequest) -> DiffResponse:
        added, removed = service.diff(body)
        return DiffResponse(added=added, removed=removed)

    @app.get("/metrics", summary="Request counters (Prometheus text format)", **METRICS_ROUTE)
    async def metrics_route() -> Response:
        return Response(await metrics.render(), media_type=CONTENT_TYPE)

    use_local_docs_assets(app)
    return app
