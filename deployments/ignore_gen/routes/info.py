"""Liveness, versions and the known features."""

from __future__ import annotations

from fastapi import APIRouter

from deployments.ignore_gen.engine import CORE_VERSION
from deployments.ignore_gen.fingerprint import ALWAYS
from deployments.ignore_gen.models import FeatureInfo, FeaturesResponse, HealthResponse, VersionResponse
from deployments.ignore_gen.routes.common import Ctx

router = APIRouter()


@router.get("/healthz", response_model=HealthResponse, summary="Liveness (always 200)")
async def healthz() -> HealthResponse:
    return HealthResponse(status="ok")


@router.get("/version", response_model=VersionResponse, summary="Core and rules-table versions")
async def version(state: Ctx) -> VersionResponse:
    engine = state.service.engine
    return VersionResponse(
        core_version=CORE_VERSION,
        rules_table_version=engine.table.version,
        templates_version=engine.templates.version,
    )


@router.get("/features", response_model=FeaturesResponse, summary="Known features")
async def features(state: Ctx) -> FeaturesResponse:
    tpl = state.service.engine.templates
    return FeaturesResponse(
        features=[
            FeatureInfo(name=n, description=tpl.descriptions[n], patterns=len(tpl.patterns[n]), always=n in ALWAYS)
            for n in tpl.names()
        ]
    )
