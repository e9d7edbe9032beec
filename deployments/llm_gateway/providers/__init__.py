"""Provider adapters: how one upstream's wire format maps to and from OpenAI's."""

from __future__ import annotations

from deployments.llm_gateway.providers.anthropic import AnthropicAdapter
from deployments.llm_gateway.providers.base import Adapter, UpstreamStreamError, Usage
from deployments.llm_gateway.providers.openai_compat import OpenAICompatAdapter

_OPENAI = OpenAICompatAdapter()
_ANTHROPIC = AnthropicAdapter()


def adapter_for(provider: str) -> Adapter:
    """``anthropic`` speaks the messages API; every other provider is OpenAI-compatible."""
    return _ANTHROPIC if provider == "anthropic" else _OPENAI


__all__ = ["Adapter", "UpstreamStreamError", "Usage", "adapter_for"]
