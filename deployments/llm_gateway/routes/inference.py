"""``/v1/*`` inference routes: each request runs the gateway's rings (auth is their first stage)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from deployments.llm_gateway.gateway import KINDS, Gateway
from deployments.llm_gateway.pipeline import Context
from rayfleet.http import request_id

_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"type": "object", "required": ["model"]}}},
    }
}


def router(gateway: Gateway) -> APIRouter:
    api = APIRouter(tags=["inference"])

    async def infer(request: Request, route: str) -> Response:
        ctx = Context(request=request, route=route, kind=KINDS[route], request_id=request_id(request))
        return await gateway.handle(ctx)

    @api.post("/v1/chat/completions", openapi_extra=_BODY)
    async def chat_completions(request: Request) -> Response:
        """OpenAI chat completions, streaming (SSE) or not."""
        return await infer(request, "/v1/chat/completions")

    @api.post("/v1/completions", openapi_extra=_BODY)
    async def completions(request: Request) -> Response:
        """OpenAI legacy text completions, streaming (SSE) or not."""
        return await infer(request, "/v1/completions")

    @api.post("/v1/embeddings", openapi_extra=_BODY)
    async def embeddings(request: Request) -> Response:
        """OpenAI embeddings."""
        return await infer(request, "/v1/embeddings")

    return api
