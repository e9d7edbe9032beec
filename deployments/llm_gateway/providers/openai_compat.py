"""OpenAI-compatible upstreams: OpenAI, vLLM, Ollama, LM Studio, llama.cpp server.

Bodies pass through with the resolved model id; streams are forwarded event by event
(the raw bytes of each event), with usage requested from the upstream and stripped
again when the client did not ask for it.
"""

from __future__ import annotations

import json
from typing import Any

from deployments.llm_gateway.providers.base import (
    Adapter,
    Kind,
    StreamTranslator,
    UpstreamRequest,
    UpstreamStreamError,
    Usage,
    loads_event,
)
from deployments.llm_gateway.sse import SSEEvent, encode_data

PATHS: dict[str, str] = {"chat": "/chat/completions", "completions": "/completions", "embeddings": "/embeddings"}


def usage_from(obj: dict[str, Any] | None) -> Usage | None:
    if not isinstance(obj, dict):
        return None
    return Usage(int(obj.get("prompt_tokens") or 0), int(obj.get("completion_tokens") or 0))


class OpenAICompatAdapter(Adapter):
    name = "openai_compat"

    def build(
        self, kind: Kind, body: dict[str, Any], model: str, key: str | None, base_url: str, stream_usage: bool
    ) -> UpstreamRequest:
        out = dict(body)
        out["model"] = model
        if out.get("stream") and stream_usage and kind != "embeddings":
            opts = dict(out.get("stream_options") or {})
            opts["include_usage"] = True
            out["stream_options"] = opts
        headers = {"Content-Type": "application/json", **self.auth_headers(key)}
        return UpstreamRequest(base_url + PATHS[kind], headers, out)

    def parse(self, kind: Kind, data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage | None]:
        return data, usage_from(data.get("usage"))

    def stream(self, kind: Kind, model: str, client_wants_usage: bool) -> StreamTranslator:
        return _OpenAIStream(kind, model, client_wants_usage)


class _OpenAIStream(StreamTranslator):
    def feed(self, event: SSEEvent) -> list[bytes]:
        data = event.data.strip()
        if data == "[DONE]":
            self.done = True
            return []
        if not data:
            return []
        obj = loads_event(data)
        if event.event == "error" or "error" in obj:
            err = obj.get("error")
            message = err.get("message") if isinstance(err, dict) else str(err or obj)
            raise UpstreamStreamError(f"upstream stream error: {message}")
        usage = usage_from(obj.get("usage"))
        if usage is not None:
            self.usage = usage
        self.reassembler.add(obj)
        if not obj.get("choices") and usage is not None and not self.client_wants_usage:
            return []
        return [encode_data(event.data) if event.event else event.raw]


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


__all__ = ["OpenAICompatAdapter", "UpstreamStreamError", "dumps"]
