"""``GET /v1/models`` and ``GET /v1/models/{id}``: served models, aliases and groups (inference keys;
the guard is applied by ``app``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.masking import bounded
from deployments.llm_gateway.routes.common import Gateway
from deployments.llm_gateway.virtual_keys import allowed


class ModelList(BaseModel):
    object: str = "list"
    data: list[dict[str, Any]]


router = APIRouter(tags=["inference"])


def _visible(gateway: Gateway, request: Request) -> list[dict[str, Any]]:
    """What the caller may use: every model for an environment key, a virtual key's own models and aliases otherwise."""
    record = getattr(request.state, "virtual_key", None)
    cards = gateway.router.list_models()
    if record is None:
        return cards
    visible = [c for c in cards if allowed(record, str(c["id"]), str(c.get("alias_of") or c["id"]))]
    for alias, target in (record.get("aliases") or {}).items():
        resolved = gateway.router.resolve_alias(target)
        if allowed(record, target, resolved):
            visible = [c for c in visible if c["id"] != alias]
            visible.append({"id": alias, "object": "model", "created": 0, "owned_by": "key", "alias_of": resolved})
    return visible


@router.get("/v1/models", response_model=ModelList)
async def models(request: Request, gateway: Gateway) -> ModelList:
    """Served models, model aliases and model groups (a virtual key sees the ones it may use)."""
    return ModelList(data=_visible(gateway, request))


@router.get("/v1/models/{model_id:path}")
async def model(model_id: str, request: Request, gateway: Gateway) -> dict[str, Any]:
    """One model, alias or group as ``GET /v1/models`` lists it (the SDK's ``models.retrieve``); ids may hold '/'."""
    for card in _visible(gateway, request):
        if card["id"] == model_id:
            return card
    raise GatewayError(404, f"The model '{bounded(model_id, 256)}' does not exist", code="model_not_found")
