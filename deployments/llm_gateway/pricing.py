"""Prices in USD per million tokens, and the cost of one request.

Lookup: ``pricing`` from the config (exact model id), then the built-in table (exact,
then longest prefix), then a default of $1 in / $3 out. Endpoints of a local provider
(Ollama, vLLM, LM Studio, llama.cpp) are free whatever the model.
"""

from __future__ import annotations

from deployments.llm_gateway.config import EndpointConfig, PriceEntry

BUILTIN: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.0),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-3-5-haiku": (0.80, 4.0),
    "claude-opus-4": (15.0, 75.0),
    "gemini-2.5-flash": (0.30, 2.50),
}
DEFAULT = (1.0, 3.0)


class PriceTable:
    def __init__(self, overrides: dict[str, PriceEntry] | None = None) -> None:
        self._overrides = {k: (v.input, v.output) for k, v in (overrides or {}).items()}
        self._prefixes = sorted(BUILTIN, key=len, reverse=True)

    def price(self, model: str, endpoint: EndpointConfig | None = None) -> tuple[float, float]:
        """(input, output) USD per million tokens."""
        if endpoint is not None and endpoint.is_local:
            return 0.0, 0.0
        if model in self._overrides:
            return self._overrides[model]
        if model in BUILTIN:
            return BUILTIN[model]
        for prefix in self._prefixes:
            if model.startswith(prefix):
                return BUILTIN[prefix]
        return DEFAULT

    def cost(self, model: str, endpoint: EndpointConfig | None, prompt_tokens: int, completion_tokens: int) -> float:
        pin, pout = self.price(model, endpoint)
        return (prompt_tokens * pin + completion_tokens * pout) / 1_000_000
