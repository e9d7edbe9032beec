"""Provider adapters: how one upstream's wire format maps to and from OpenAI's."""

from __future__ import annotations

from functools import lru_cache

from deployments.llm_gateway.providers.anthropic import AnthropicAdapter
from deployments.llm_gateway.providers.azure import AzureOpenAIAdapter
from deployments.llm_gateway.providers.base import Adapter, EventReader, UpstreamStreamError, Usage
from deployments.llm_gateway.providers.bedrock import BedrockAdapter
from deployments.llm_gateway.providers.gemini import GeminiAdapter
from deployments.llm_gateway.providers.openai_compat import OpenAICompatAdapter

_OPENAI = OpenAICompatAdapter()
_ANTHROPIC = AnthropicAdapter()
_GEMINI = GeminiAdapter()


@lru_cache(maxsize=64)
def _azure(api_version: str) -> AzureOpenAIAdapter:
    return AzureOpenAIAdapter(api_version)


@lru_cache(maxsize=64)
def _bedrock(region: str) -> BedrockAdapter:
    return BedrockAdapter(region)


def adapter_for(provider: str, api_version: str = "", region: str = "") -> Adapter:
    """``anthropic`` speaks the messages API, ``gemini`` generateContent, ``azure`` OpenAI's
    format on deployment URLs at ``api_version``, ``bedrock`` the Converse API signed for
    ``region``; every other provider is OpenAI-compatible."""
    if provider == "bedrock":
        return _bedrock(region)
    if provider == "anthropic":
        return _ANTHROPIC
    if provider == "gemini":
        return _GEMINI
    if provider == "azure":
        return _azure(api_version)
    return _OPENAI


__all__ = ["Adapter", "EventReader", "UpstreamStreamError", "Usage", "adapter_for"]
