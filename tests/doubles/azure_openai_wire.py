"""Azure OpenAI's wire format for the upstream double: deployment URLs, `api-key`, `api-version`.

As strict as the service on what the gateway sends: a request without `api-version` is 404
("Resource not found", as Azure answers), an `api-version` Azure does not serve is 400, a
missing or wrong `api-key` is 401 with Azure's message, a deployment that does not exist is
404 `DeploymentNotFound`, and a bearer token sent alongside the key is refused (the gateway must
not leak a key meant for another provider). The answers are OpenAI's (`openai_answer`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

# a sample of the GA and preview versions Azure serves
API_VERSIONS = frozenset({"2024-06-01", "2024-10-21", "2025-01-01-preview", "2025-04-01-preview"})
KINDS = ("chat/completions", "completions", "embeddings")


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


def add_routes(
    app: web.Application,
    double: Any,
    record: Callable[[Any, web.Request, Any], None],
    answer: Callable[[Any, web.Request, dict[str, Any]], Awaitable[web.StreamResponse]],
) -> None:
    async def deployment(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "BadRequest", "invalid JSON")
        record(double, request, body)
        version = request.query.get("api-version")
        if version is None:
            return _error(404, "404", "Resource not found")
        if version not in API_VERSIONS:
            return _error(400, "BadRequest", "API version not supported")
        key = request.headers.get("api-key")
        if request.headers.get("Authorization") or (double.keys and key not in double.keys) or not key:
            return _error(
                401,
                "401",
                "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a "
                "valid key for an active subscription and use a correct regional API endpoint for your resource.",
            )
        name = request.match_info["deployment"]
        if name not in double.models:
            return _error(404, "DeploymentNotFound", "The API deployment for this resource does not exist.")
        return await answer(double, request, {**body, "model": name})

    async def models(request: web.Request) -> web.Response:
        record(double, request, None)
        if request.query.get("api-version") not in API_VERSIONS:
            return _error(404, "404", "Resource not found")
        if double.keys and request.headers.get("api-key") not in double.keys:
            return _error(401, "401", "Access denied due to invalid subscription key.")
        return web.json_response({"object": "list", "data": [{"id": m, "object": "model"} for m in double.models]})

    for kind in KINDS:
        app.router.add_post(f"/openai/deployments/{{deployment}}/{kind}", deployment)
    app.router.add_get("/openai/models", models)
