"""Generating an ignore file, and diffing one against an existing file."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from deployments.ignore_gen.engine import Generated
from deployments.ignore_gen.models import DiffRequest, DiffResponse, GenerateRequest, GenerateResponse
from deployments.ignore_gen.routes.common import ERRORS, Ctx
from rayfleet.etag import none_match, quote

router = APIRouter()


def _headers(result: Generated) -> dict[str, str]:
    return {
        "ETag": quote(result.output_hash),
        "X-Core-Version": result.core_version,
        "X-Rules-Version": result.rules_table_version,
    }


@router.post(
    "/generate",
    response_model=GenerateResponse,
    responses={**ERRORS, 304: {"description": "`If-None-Match` matched the ETag; no body"}},
    summary="Generate an ignore file",
)
async def generate(body: GenerateRequest, request: Request, state: Ctx) -> Response:
    result = state.service.generate(body)
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


@router.post(
    "/diff_against",
    response_model=DiffResponse,
    responses=ERRORS,
    summary="Patterns to add to / remove from an existing ignore file",
)
async def diff_against(body: DiffRequest, state: Ctx) -> DiffResponse:
    diff = state.service.diff(body)
    return DiffResponse.model_validate(
        {"added": diff.added, "removed": diff.removed, "covered": [c.as_dict() for c in diff.covered]}
    )
