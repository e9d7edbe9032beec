"""Anthropic messages API, translated from and to OpenAI chat completions.

Request: system messages become ``system``; ``tool`` messages become ``tool_result``
blocks; assistant ``tool_calls`` become ``tool_use`` blocks; images become image blocks;
``stop`` becomes ``stop_sequences``; ``max_tokens`` is required upstream (default 4096).
Response and stream: text and tool-use blocks become OpenAI messages/deltas, stop
reasons are mapped, usage is read from ``message_start``/``message_delta``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.providers.base import (
    Adapter,
    Kind,
    StreamTranslator,
    TranslatedStream,
    UpstreamRequest,
    UpstreamStreamError,
    Usage,
    loads_event,
)
from deployments.llm_gateway.providers.parts import append_turn, call_arguments, convert_content, data_url
from deployments.llm_gateway.sse import SSEEvent

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "pause_turn": "stop",
    "refusal": "content_filter",
}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _image(url: str) -> dict[str, Any]:
    found = data_url(url)
    if found is not None:
        return {"type": "image", "source": {"type": "base64", "media_type": found[0], "data": found[1]}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    return convert_content(content, lambda text: {"type": "text", "text": text}, _image, "anthropic")


def to_anthropic(body: dict[str, Any], model: str) -> dict[str, Any]:
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for msg in body.get("messages") or []:
        role = msg.get("role")
        if role in ("system", "developer"):
            system.append(_text_of(msg.get("content")))
        elif role == "user":
            append_turn(messages, "user", _content_blocks(msg.get("content")))
        elif role == "assistant":
            blocks = _content_blocks(msg.get("content"))
            for call in msg.get("tool_calls") or []:
                name = (call.get("function") or {}).get("name", "")
                args = call_arguments(call, "anthropic")
                blocks.append({"type": "tool_use", "id": call.get("id", ""), "name": name, "input": args})
            append_turn(messages, "assistant", blocks)
        elif role == "tool":
            append_turn(
                messages,
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": msg.get("tool_call_id", ""),
                        "content": _text_of(msg.get("content")),
                    }
                ],
            )
        else:
            raise GatewayError(400, f"unsupported message role {role!r}")
    out: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_MAX_TOKENS,
    }
    if system:
        out["system"] = "\n\n".join(s for s in system if s)
    for key in ("temperature", "top_p", "stream"):
        if body.get(key) is not None:
            out[key] = body[key]
    stop = body.get("stop")
    if stop:
        out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if body.get("tools"):
        out["tools"] = [
            {
                "name": t["function"]["name"],
                "description": t["function"].get("description", ""),
                "input_schema": t["function"].get("parameters") or {"type": "object", "properties": {}},
            }
            for t in body["tools"]
            if t.get("type") == "function"
        ]
    choice = body.get("tool_choice")
    if choice == "required":
        out["tool_choice"] = {"type": "any"}
    elif choice == "auto":
        out["tool_choice"] = {"type": "auto"}
    elif choice == "none":
        out["tool_choice"] = {"type": "none"}
    elif isinstance(choice, dict) and choice.get("function"):
        out["tool_choice"] = {"type": "tool", "name": choice["function"].get("name", "")}
    user = body.get("user")
    if isinstance(user, str) and user:
        out["metadata"] = {"user_id": user}
    return out


def from_anthropic(data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage]:
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in data.get("content") or []:
        if block.get("type") == "text":
            text.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            calls.append(
                {
                    "id": block.get("id", ""),
                    "type": "function",
                    "function": {"name": block.get("name", ""), "arguments": json.dumps(block.get("input") or {})},
                }
            )
    raw_usage = data.get("usage") or {}
    usage = Usage(int(raw_usage.get("input_tokens") or 0), int(raw_usage.get("output_tokens") or 0))
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": data.get("id", ""),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": data.get("model") or model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": STOP_REASONS.get(data.get("stop_reason") or "", "stop")}
        ],
        "usage": usage.as_openai(),
    }, usage


class AnthropicAdapter(Adapter):
    name = "anthropic"
    kinds = frozenset({"chat"})

    def auth_headers(self, key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def build(
        self, kind: Kind, body: dict[str, Any], model: str, key: str | None, base_url: str, stream_usage: bool
    ) -> UpstreamRequest:
        if kind != "chat":
            raise GatewayError(400, f"anthropic endpoints serve chat completions only, not {kind}")
        headers = {"Content-Type": "application/json", **self.auth_headers(key)}
        return UpstreamRequest(base_url + "/messages", headers, to_anthropic(body, model))

    def parse(self, kind: Kind, data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage | None]:
        return from_anthropic(data, model)

    def stream(self, kind: Kind, model: str, client_wants_usage: bool) -> StreamTranslator:
        return _AnthropicStream(kind, model, client_wants_usage)


class _AnthropicStream(TranslatedStream):
    def __init__(self, kind: Kind, model: str, client_wants_usage: bool) -> None:
        super().__init__(kind, model, client_wants_usage)
        self._input = 0
        self._output = 0
        self._finish: str | None = None
        self._tool_index: dict[int, int] = {}

    def feed(self, event: SSEEvent) -> list[bytes]:
        if not event.data.strip():
            return []
        obj = loads_event(event.data)
        etype = obj.get("type") or event.event
        if etype == "error":
            err = obj.get("error") or {}
            raise UpstreamStreamError(f"upstream stream error: {err.get('message', 'unknown')}")
        if etype == "message_start":
            message = obj.get("message") or {}
            self._id = message.get("id", "")
            self.model = message.get("model") or self.model
            usage = message.get("usage") or {}
            self._input = int(usage.get("input_tokens") or 0)
            self._output = int(usage.get("output_tokens") or 0)
            return [self._chunk({"role": "assistant", "content": ""})]
        if etype == "content_block_start":
            block = obj.get("content_block") or {}
            if block.get("type") == "tool_use":
                pos = len(self._tool_index)
                self._tool_index[int(obj.get("index", 0))] = pos
                return [
                    self._chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": pos,
                                    "id": block.get("id", ""),
                                    "type": "function",
                                    "function": {"name": block.get("name", ""), "arguments": ""},
                                }
                            ]
                        }
                    )
                ]
            if block.get("type") == "text" and block.get("text"):
                return [self._chunk({"content": block["text"]})]
            return []
        if etype == "content_block_delta":
            delta = obj.get("delta") or {}
            if delta.get("type") == "text_delta":
                return [self._chunk({"content": delta.get("text", "")})]
            if delta.get("type") == "input_json_delta":
                pos = self._tool_index.get(int(obj.get("index", 0)), 0)
                return [
                    self._chunk(
                        {"tool_calls": [{"index": pos, "function": {"arguments": delta.get("partial_json", "")}}]}
                    )
                ]
            return []
        if etype == "message_delta":
            delta = obj.get("delta") or {}
            if delta.get("stop_reason"):
                self._finish = STOP_REASONS.get(delta["stop_reason"], "stop")
            usage = obj.get("usage") or {}
            if usage.get("output_tokens") is not None:
                self._output = int(usage["output_tokens"])
            if usage.get("input_tokens"):
                self._input = int(usage["input_tokens"])
            return []
        if etype == "message_stop":
            self.done = True
            self.usage = Usage(self._input, self._output)
            return [self._chunk({}, self._finish or "stop"), *self._usage_chunk(self.usage)]
        return []


__all__ = ["AnthropicAdapter", "UpstreamStreamError", "from_anthropic", "to_anthropic"]
