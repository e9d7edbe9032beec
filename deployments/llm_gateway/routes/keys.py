"""Virtual keys (``/api/v1/keys``), admin keys or an admin session only.

| Method | Path | Answer |
|---|---|---|
| GET | /api/v1/keys | ``{data: [key], total}`` (never a secret or its hash) |
| POST | /api/v1/keys | 201, the new key with its secret in ``key`` (shown this once) |
| PATCH | /api/v1/keys/{id} | the key with the fields given changed (name, models, expires_at, team, metadata) |
| POST | /api/v1/keys/{id}/rotate | the key with a new secret in ``key`` (shown this once); the old one stops working |
| DELETE | /api/v1/keys/{id} | the key with ``revoked_at`` set; 404 ``key_not_found`` |

A change holds on this replica at once and on every other one within a second.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse

from actors.llm_gateway import KeyBoard
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.routes.common import Gateway, parsed_body
from deployments.llm_gateway.routes.schemas import body
from deployments.llm_gateway.virtual_keys import KeyIn, KeyUpdate, new_key, new_secret, public
from rayfleet.logs import get_logger, register_secret
from rayfleet.state import call

log = get_logger("llm_gateway")

router = APIRouter(tags=["control plane"])


async def _change(gateway: Gateway, result_of: Any) -> dict[str, Any]:
    """An actor answer in the one error shape; this replica applies the change at once."""
    try:
        result: dict[str, Any] = await result_of
    except Exception as exc:
        log.warning("key actor call failed", extra={"error": type(exc).__name__})
        raise GatewayError(503, "the key store is unavailable", code="keys_unavailable") from None
    if not result["ok"]:
        status, code = (404, "key_not_found") if result["error"] == "not_found" else (409, "key_exists")
        raise GatewayError(status, result["message"], code=code)
    try:
        await gateway.views.keys.refresh()
    except Exception:
        log.warning("key refresh after a change failed", exc_info=True)
    return result


@router.get("/api/v1/keys")
async def list_keys(gateway: Gateway) -> JSONResponse:
    """Every virtual key, revoked ones included, newest first."""
    keys = gateway.views.keys
    try:
        await keys.refresh()
    except Exception:
        raise GatewayError(503, "the key store is unavailable", code="keys_unavailable") from None
    data = sorted((public(k) for k in keys.records.values()), key=lambda k: (-k["created_at"], k["id"]))
    return JSONResponse({"data": data, "total": len(data)})


@router.post("/api/v1/keys", status_code=201, openapi_extra=body(KeyIn.model_json_schema()))
async def create_key(request: Request, gateway: Gateway) -> JSONResponse:
    """A new inference key: ``name``, and optionally ``models`` (empty: all), ``expires_at`` (Unix
    seconds), ``team`` and ``metadata``. The answer holds the secret in ``key``; only its hash is kept."""
    fields = await parsed_body(request, KeyIn)
    key, record = new_key(fields)
    register_secret(key)
    result = await _change(gateway, call(gateway.handles.keys, KeyBoard.create, record))
    return JSONResponse({**public(result["key"]), "key": key}, status_code=201)


@router.patch("/api/v1/keys/{key_id}", openapi_extra=body(KeyUpdate.model_json_schema()))
async def update_key(key_id: str, request: Request, gateway: Gateway) -> dict[str, Any]:
    """Change a key's name, models, expiry, team or metadata (only the fields sent)."""
    fields = (await parsed_body(request, KeyUpdate)).model_dump(exclude_unset=True)
    if fields.get("name", "") is None:
        raise GatewayError(422, "name: may not be null", code="validation_error")
    result = await _change(gateway, call(gateway.handles.keys, KeyBoard.update, key_id, fields))
    return public(result["key"])


@router.post("/api/v1/keys/{key_id}/rotate")
async def rotate_key(key_id: str, gateway: Gateway) -> JSONResponse:
    """A new secret for the key (same id, models and limits); the old secret stops working."""
    key, kept = new_secret()
    register_secret(key)
    result = await _change(gateway, call(gateway.handles.keys, KeyBoard.update, key_id, kept))
    return JSONResponse({**public(result["key"]), "key": key})


@router.delete("/api/v1/keys/{key_id}")
async def revoke_key(key_id: str, gateway: Gateway) -> dict[str, Any]:
    """Revoke a key: refused everywhere within a second; it stays listed with ``revoked_at``."""
    result = await _change(gateway, call(gateway.handles.keys, KeyBoard.revoke, key_id))
    return public(result["key"])
