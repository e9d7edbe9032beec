"""``/v1/*`` inference routes: each request runs the gateway's rings (auth is their first stage).

No dependencies here: the hot path reads the replica's state off the app (``gateway_of``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.routes.common import gateway_of
from deployments.llm_gateway.routes.schemas import CHAT, COMPLETIONS, EMBEDDINGS, body
from rayfleet.http import request_id

KINDS = {"/v1/chat/completions": "chat", "/v1/completions": "completions", "/v1/embeddings": "embeddings"}

router = APIRouter(tags=["inference"])


async def _infer(request: Request, route: str) -> Response:
    ctx = Context(request=request, route=route, kind=KINDS[route], request_id=request_id(request))
    return await gateway_of(request).handler.handle(ctx)


@router.post("/v1/chat/completions", openapi_extra=body(CHAT))
async def chat_completions(request: Request) -> Response:
    """OpenAI chat completions, streaming (SSE) or not."""
    return await _infer(request, "/v1/chat/completions")


@router.post("/v1/completions", openapi_extra=body(COMPLETIONS))
async def completions(request: Request) -> Response:
    """OpenAI legacy text completions, streaming (SSE) or not."""
    return await _infer(request, "/v1/completions")


@router.post("/v1/embeddings", openapi_extra=body(EMBEDDINGS))
async def embeddings(request: Request) -> Response:
    """OpenAI embeddings."""
    return await _infer(request, "/v1/embeddings")
