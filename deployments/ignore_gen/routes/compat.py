"""gitignore.io-compatible routes: `GET /api/list` and `GET /api/{a,b,...}` (text/plain)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from deployments.ignore_gen import gitignore_io
from deployments.ignore_gen.errors import ApiError
from deployments.ignore_gen.routes.common import ERRORS, Ctx

router = APIRouter(prefix="/api", tags=["gitignore.io compatible"])

TEXT = "text/plain; charset=utf-8"


@router.get(
    "/list",
    summary="Template names, as gitignore.io lists them",
    responses={200: {"content": {"text/plain": {}, "application/json": {}}}, 422: ERRORS[422]},
)
async def list_names(
    state: Ctx, format: Literal["text", "lines", "json"] = Query("text", description="text, lines or json")
) -> Response:
    templates = state.service.engine.templates
    if format == "json":
        return JSONResponse(gitignore_io.list_json(templates))
    return PlainTextResponse(gitignore_io.list_text(templates, format), media_type=TEXT)


@router.get(
    "/{names}",
    summary="An ignore file for comma-separated template names, as gitignore.io answers",
    responses={
        200: {"content": {"text/plain": {}}},
        404: {"content": {"text/plain": {}}, "description": "a name is unknown (error line inline)"},
        413: ERRORS[413],
        422: ERRORS[422],
    },
)
async def by_names(names: str, request: Request, state: Ctx) -> Response:
    try:
        wanted = gitignore_io.requested(names)
    except gitignore_io.BadName as exc:
        raise ApiError(422, str(exc)) from None
    if not wanted:
        raise ApiError(422, "no template names given; GET /api/list lists them")
    limit = state.config.limits.max_features
    if len(wanted) > limit:
        raise ApiError(413, f"{len(wanted)} names; the limit is {limit}")
    url = str(request.base_url).rstrip("/") + "/api/" + ",".join(wanted)
    answer = gitignore_io.render(state.service.engine.templates, wanted, url)
    return PlainTextResponse(answer.text, status_code=404 if answer.unknown else 200, media_type=TEXT)
