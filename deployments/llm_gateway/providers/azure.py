"""Azure OpenAI: OpenAI's wire format behind deployment URLs, an `api-key` header and `api-version`.

`{base_url}/openai/deployments/{deployment}/chat/completions?api-version=...`: the model a
request resolves to is the Azure deployment name; the body is OpenAI's, streams included
(usage is asked for with `stream_options` as on OpenAI). The endpoint's `api_version` setting is
required (startup refuses an Azure endpoint without one).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from deployments.llm_gateway.providers.base import Kind, UpstreamRequest
from deployments.llm_gateway.providers.openai_compat import PATHS, OpenAICompatAdapter


class AzureOpenAIAdapter(OpenAICompatAdapter):
    name = "azure"

    def __init__(self, api_version: str) -> None:
        self.api_version = api_version

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"api-key": key} if key else {}

    def models_url(self, base_url: str) -> str:
        return f"{base_url}/openai/models?api-version={quote(self.api_version, safe='')}"

    def build(
        self, kind: Kind, body: dict[str, Any], model: str, key: str | None, base_url: str, stream_usage: bool
    ) -> UpstreamRequest:
        request = super().build(kind, body, model, key, base_url, stream_usage)
        deployment = quote(model, safe="")
        version = quote(self.api_version, safe="")
        request.url = f"{base_url}/openai/deployments/{deployment}{PATHS[kind]}?api-version={version}"
        return request


__all__ = ["AzureOpenAIAdapter"]
