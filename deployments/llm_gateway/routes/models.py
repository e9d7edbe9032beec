"""``GET /v1/models``: served models, aliases and groups (inference keys; the guard is applied by ``app``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from deployments.llm_gateway.routes.common import Gateway


class ModelList(BaseModel):
    object: str = "list"
    data: list[dict[str, Any]]


router = APIRouter(tags=["inference"])


@router.get("/v1/models", response_model=ModelList)
async def models(gateway: Gateway) -> ModelList:
    """Served models, model aliases and model groups."""
    return ModelList(data=gateway.router.list_models())
