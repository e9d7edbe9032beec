"""``/v1/*`` inference routes: each request runs the gateway's rings (auth is their first stage)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from deployments.llm_gateway.gateway import KINDS, Gateway
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.routes.schemas import CHAT, COMPLETIONS, EMBEDDINGS, body
from rayfleet.http import request_id


def router(gateway: Gateway) -> APIRouter:
    api = APIRouter(tags=["inference"])

    async def infer(request: Request, route: str) -> Response:
        ctx = Context(request=request, route=route, kind=KINDS[route], request_id=request_id(request))
        return await gateway.handle(ctx)

    @api.post("/v1/chat/completions", openapi_extra=body(CHAT))
    async def chat_completions(request: Request) -> Response:
        """OpenAI chat completions, streaming (SSE) or not."""
        return await infer(request, "/v1/chat/completions")

    @api.post("/v1/completions", openapi_extra=body(COMPLETIONS))
    async def completions(request: Request) -> Response:
        """OpenAI legacy text completions, streaming (SSE) or not."""
        return await infer(request, "/v1/completions")

    @api.post("/v1/embeddings", openapi_extra=body(EMBEDDINGS))
    async def embeddings(request: Request) -> Response:
        """OpenAI embeddings."""
        return await infer(request, "/v1/embeddings")

    return api
