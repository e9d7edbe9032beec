"""``GET /v1/models`` and ``GET /v1/models/{id}``: served models, aliases and groups (inference keys;
the guard is applied by ``app``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.masking import bounded
from deployments.llm_gateway.routes.common import Gateway


class ModelList(BaseModel):
    object: str = "list"
    data: list[dict[str, Any]]


router = APIRouter(tags=["inference"])


@router.get("/v1/models", response_model=ModelList)
async def models(gateway: Gateway) -> ModelList:
    """Served models, model aliases and model groups."""
    return ModelList(data=gateway.router.list_models())


@router.get("/v1/models/{model_id:path}")
async def model(model_id: str, gateway: Gateway) -> dict[str, Any]:
    """One model, alias or group as ``GET /v1/models`` lists it (the SDK's ``models.retrieve``); ids may hold '/'."""
    for card in gateway.router.list_models():
        if card["id"] == model_id:
            return card
    raise GatewayError(404, f"The model '{bounded(model_id, 256)}' does not exist", code="model_not_found")
