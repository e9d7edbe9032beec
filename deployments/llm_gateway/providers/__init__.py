"""Provider adapters: how one upstream's wire format maps to and from OpenAI's."""

from __future__ import annotations

from functools import lru_cache

from deployments.llm_gateway.providers.anthropic import AnthropicAdapter
from deployments.llm_gateway.providers.azure import AzureOpenAIAdapter
from deployments.llm_gateway.providers.base import Adapter, UpstreamStreamError, Usage
from deployments.llm_gateway.providers.gemini import GeminiAdapter
from deployments.llm_gateway.providers.openai_compat import OpenAICompatAdapter

_OPENAI = OpenAICompatAdapter()
_ANTHROPIC = AnthropicAdapter()
_GEMINI = GeminiAdapter()


@lru_cache(maxsize=64)
def _azure(api_version: str) -> AzureOpenAIAdapter:
    return AzureOpenAIAdapter(api_version)


def adapter_for(provider: str, api_version: str = "") -> Adapter:
    """``anthropic`` speaks the messages API, ``gemini`` generateContent, ``azure`` OpenAI's
    format on deployment URLs at ``api_version``; every other provider is OpenAI-compatible."""
    if provider == "anthropic":
        return _ANTHROPIC
    if provider == "gemini":
        return _GEMINI
    if provider == "azure":
        return _azure(api_version)
    return _OPENAI


__all__ = ["Adapter", "UpstreamStreamError", "Usage", "adapter_for"]
