"""``GET /v1/models``: served models, aliases and groups (inference keys)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from deployments.llm_gateway.gateway import Gateway


class ModelList(BaseModel):
    object: str = "list"
    data: list[dict[str, Any]]


def router(gateway: Gateway) -> APIRouter:
    api = APIRouter(tags=["inference"])

    @api.get("/v1/models", response_model=ModelList, dependencies=[Depends(gateway.inference_guard)])
    async def models() -> ModelList:
        """Served models, model aliases and model groups."""
        await gateway.start()
        return ModelList(data=gateway.router.list_models())

    return api
