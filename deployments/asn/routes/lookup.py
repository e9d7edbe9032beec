"""Lookups by AS number, by IP address and by country (API key; mounted by app.py under its guard)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import JSONResponse, Response

from deployments.asn import bulk, schemas
from deployments.asn.errors import ApiError
from deployments.asn.parsing import parse_asn, parse_ip
from deployments.asn.routes.common import CACHE_CONTROL, ERRORS, Ctx, etag, ready_store
from rayfleet.etag import none_match, quote

router = APIRouter(prefix="/api/v1", tags=["lookup"], responses=ERRORS)


@router.get(
    "/asn/{asn}",
    summary="Look up an AS number",
    response_model=schemas.AsnRecord,
    description="`15169`, `AS15169`, `as15169` or asdot `1.10`. Unknown numbers give 404.",
)
async def get_asn(asn: str, request: Request, state: Ctx) -> Response:
    try:
        number = parse_asn(asn)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    db = ready_store(state)
    tag = etag(db, f"asn:{number}")
    headers = {"ETag": quote(tag), "Cache-Control": CACHE_CONTROL}
    if none_match(request.headers.get("if-none-match"), tag):
        return Response(status_code=304, headers=headers)
    record = db.get_asn(number)
    if record is None:
        raise ApiError(404, f"AS{number} is not in the dataset")
    return JSONResponse({**record, "dataset": db.dataset()}, headers=headers)


@router.get(
    "/ip/{address}",
    summary="AS number announcing an IP address (longest-prefix match)",
    response_model=schemas.IpRecord,
)
async def get_ip(address: str, state: Ctx) -> JSONResponse:
    try:
        family, value, canonical = parse_ip(address)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    db = ready_store(state)
    match = db.match_ip(family, value)
    if match is None:
        raise ApiError(404, f"no announced prefix covers {canonical} in the dataset")
    summary = db.summary(match.asn) or {"asn": match.asn}
    body = {
        "ip": canonical,
        "family": family,
        "prefix": match.prefix,
        **summary,
        "asn_text": f"AS{match.asn}",
        "dataset": db.dataset(),
    }
    return JSONResponse(body, headers={"Cache-Control": CACHE_CONTROL})


@router.post(
    "/ip/bulk",
    summary="Look up to 10 000 IP addresses at once",
    response_model=schemas.BulkResult,
    description=(
        'Body `{"addresses": ["8.8.8.8", ...]}` (1 to 10 000 entries). Each address counts as one '
        "request against the rate limit, all or none: a batch larger than what is left of the "
        "window gets 429 with `Retry-After` set to when it fits. 413 beyond 10 000 addresses "
        "or 1 MiB; 422 for a malformed body or address (the first few are named)."
    ),
    responses={
        413: {"model": schemas.ErrorBody, "description": "too many addresses or too large a body"},
        422: {"model": schemas.ErrorBody, "description": "malformed body or address"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schemas.BulkRequest.model_json_schema()}},
        }
    },
)
async def bulk_ip(request: Request, state: Ctx) -> JSONResponse:
    parsed = bulk.parse(await request.body())
    db = ready_store(state)
    return JSONResponse(bulk.lookup(db, parsed), headers={"Cache-Control": "no-store"})


@router.get(
    "/country/{country}/prefixes",
    summary="Every prefix announced by ASes registered in a country",
    response_model=schemas.CountryPrefixes,
    description=(
        "Prefix → AS → the AS's registration country from the AS names list. Other components "
        "(mitigation geo_block, web filter geo import) build their country filters from this."
    ),
)
async def country_prefixes(
    state: Ctx,
    country: str = Path(..., pattern="^[A-Za-z]{2}$", description="ISO 3166 code"),
    family: int | None = Query(None, ge=4, le=6, description="4 or 6; both when absent"),
) -> JSONResponse:
    if family not in (None, 4, 6):
        raise ApiError(400, "family must be 4 or 6")
    db = ready_store(state)
    code = country.upper()
    prefixes = await asyncio.to_thread(db.country_prefixes, code, family)
    body = {
        "country": code,
        "family": family,
        "count": len(prefixes),
        "prefixes": prefixes,
        "source": "prefix -> origin AS -> AS registration country (AS names list)",
        "dataset": db.dataset(),
    }
    return JSONResponse(body, headers={"Cache-Control": CACHE_CONTROL})
