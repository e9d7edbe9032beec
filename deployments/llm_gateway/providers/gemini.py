"""Google Gemini (`generateContent`), translated from and to OpenAI chat completions.

Request: system messages become `systemInstruction`; user and assistant turns become `user`
and `model` contents (consecutive turns of one role merged); images in data URLs become
`inlineData` (other image URLs are refused: Gemini reads only uploaded files); assistant
`tool_calls` become `functionCall` parts and `tool` messages `functionResponse` parts named
after the call they answer; sampling settings go to `generationConfig`; `tool_choice` to
`toolConfig`. Response and stream: text and function calls become OpenAI messages and deltas,
finish reasons are mapped, usage comes from `usageMetadata`. Streams use `alt=sse`; the event
carrying a finish reason is the last.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any
from urllib.parse import quote

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
from deployments.llm_gateway.providers.parts import append_turn, call_arguments, convert_content, data_url, refuse
from deployments.llm_gateway.sse import SSEEvent

FINISH_REASONS = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}
GENERATION = {
    "temperature": "temperature",
    "top_p": "topP",
    "n": "candidateCount",
    "seed": "seed",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
}
TOOL_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def _bad(message: str) -> GatewayError:
    return refuse("gemini", message)


def _inline(url: str) -> dict[str, Any]:
    found = data_url(url)
    if found is None:
        raise _bad("images must be data URLs")
    return {"inlineData": {"mimeType": found[0], "data": found[1]}}


def _parts(content: Any) -> list[dict[str, Any]]:
    return convert_content(content, lambda text: {"text": text}, _inline, "gemini")


def _text(content: Any) -> str:
    return "".join(p.get("text", "") for p in _parts(content))


def _function_response(msg: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    call_id = msg.get("tool_call_id", "")
    if call_id not in names:
        raise _bad(f"tool message answers an unknown tool call {call_id!r}")
    text = _text(msg.get("content"))
    try:
        result = json.loads(text)
    except ValueError:
        result = text
    response = result if isinstance(result, dict) else {"content": result}
    return {"functionResponse": {"name": names[call_id], "response": response}}


def to_gemini(body: dict[str, Any]) -> dict[str, Any]:
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool call id -> function name (Gemini answers calls by name)
    for msg in body.get("messages") or []:
        role = msg.get("role")
        if role in ("system", "developer"):
            system.append(_text(msg.get("content")))
        elif role == "user":
            append_turn(contents, "user", _parts(msg.get("content")), "parts")
        elif role == "assistant":
            parts = _parts(msg.get("content"))
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                names[call.get("id", "")] = fn.get("name", "")
                parts.append({"functionCall": {"name": fn.get("name", ""), "args": call_arguments(call, "gemini")}})
            append_turn(contents, "model", parts, "parts")
        elif role == "tool":
            append_turn(contents, "user", [_function_response(msg, names)], "parts")
        else:
            raise _bad(f"unsupported message role {role!r}")
    if not contents:
        raise _bad("at least one user or assistant message is required")
    out: dict[str, Any] = {"contents": contents}
    if any(system):
        out["systemInstruction"] = {"parts": [{"text": "\n\n".join(s for s in system if s)}]}
    config = {target: body[source] for source, target in GENERATION.items() if body.get(source) is not None}
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    if limit:
        config["maxOutputTokens"] = limit
    stop = body.get("stop")
    if stop:
        config["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    if (body.get("response_format") or {}).get("type") == "json_object":
        config["responseMimeType"] = "application/json"
    if config:
        out["generationConfig"] = config
    tools = [t["function"] for t in body.get("tools") or [] if t.get("type") == "function" and t.get("function")]
    if tools:
        out["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": fn.get("name", ""),
                        "description": fn.get("description", ""),
                        **({"parameters": fn["parameters"]} if fn.get("parameters") else {}),
                    }
                    for fn in tools
                ]
            }
        ]
    choice = body.get("tool_choice")
    if isinstance(choice, str) and choice in TOOL_MODES:
        out["toolConfig"] = {"functionCallingConfig": {"mode": TOOL_MODES[choice]}}
    elif isinstance(choice, dict) and choice.get("function"):
        name = choice["function"].get("name", "")
        out["toolConfig"] = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}
    return out


def _usage(data: dict[str, Any]) -> Usage | None:
    meta = data.get("usageMetadata")
    if not isinstance(meta, dict):
        return None
    completion = int(meta.get("candidatesTokenCount") or 0) + int(meta.get("thoughtsTokenCount") or 0)
    return Usage(int(meta.get("promptTokenCount") or 0), completion)


def _calls(parts: list[dict[str, Any]], first: int) -> list[dict[str, Any]]:
    calls = []
    for n, part in enumerate(p for p in parts if "functionCall" in p):
        fn = part["functionCall"]
        calls.append(
            {
                "id": fn.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": fn.get("name", ""), "arguments": json.dumps(fn.get("args") or {})},
                "index": first + n,
            }
        )
    return calls


def _finish(reason: str | None, called: bool) -> str | None:
    if not reason:
        return None
    mapped = FINISH_REASONS.get(reason, "stop")
    return "tool_calls" if called and mapped == "stop" else mapped


def from_gemini(data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage]:
    choices = []
    for n, candidate in enumerate(data.get("candidates") or []):
        parts = (candidate.get("content") or {}).get("parts") or []
        text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
        calls = _calls(parts, 0)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        finish = _finish(candidate.get("finishReason"), bool(calls)) or "stop"
        choices.append({"index": int(candidate.get("index", n)), "message": message, "finish_reason": finish})
    if not choices:  # the prompt itself was blocked (promptFeedback.blockReason)
        choices = [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "content_filter"}]
    usage = _usage(data) or Usage()
    return {
        "id": data.get("responseId") or f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": data.get("modelVersion") or model,
        "choices": choices,
        "usage": usage.as_openai(),
    }, usage


class GeminiAdapter(Adapter):
    name = "gemini"
    kinds = frozenset({"chat"})

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": key} if key else {}

    def build(
        self, kind: Kind, body: dict[str, Any], model: str, key: str | None, base_url: str, stream_usage: bool
    ) -> UpstreamRequest:
        if kind != "chat":
            raise GatewayError(400, f"gemini endpoints serve chat completions only, not {kind}")
        method = "streamGenerateContent?alt=sse" if body.get("stream") else "generateContent"
        headers = {"Content-Type": "application/json", **self.auth_headers(key)}
        return UpstreamRequest(f"{base_url}/models/{quote(model, safe='')}:{method}", headers, to_gemini(body))

    def parse(self, kind: Kind, data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage | None]:
        return from_gemini(data, model)

    def stream(self, kind: Kind, model: str, client_wants_usage: bool) -> StreamTranslator:
        return _GeminiStream(kind, model, client_wants_usage)


class _GeminiStream(TranslatedStream):
    def __init__(self, kind: Kind, model: str, client_wants_usage: bool) -> None:
        super().__init__(kind, model, client_wants_usage)
        self._id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self._started = False
        self._calls = 0

    def feed(self, event: SSEEvent) -> list[bytes]:
        if not event.data.strip():
            return []
        obj = loads_event(event.data)
        if "error" in obj:
            err = obj.get("error")
            message = err.get("message") if isinstance(err, dict) else str(err)
            raise UpstreamStreamError(f"upstream stream error: {message}")
        out: list[bytes] = []
        if not self._started:
            self._started = True
            self._id = obj.get("responseId") or self._id
            out.append(self._chunk({"role": "assistant", "content": ""}))
        usage = _usage(obj)
        if usage is not None:
            self.usage = usage
        candidates = obj.get("candidates") or []
        candidate = candidates[0] if candidates else {}
        parts = (candidate.get("content") or {}).get("parts") or []
        text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
        if text:
            out.append(self._chunk({"content": text}))
        calls = _calls(parts, self._calls)
        if calls:
            self._calls += len(calls)
            out.append(self._chunk({"tool_calls": calls}))
        reason = candidate.get("finishReason") or (
            None if candidates else obj.get("promptFeedback", {}).get("blockReason")
        )
        if reason:
            self.done = True
            out.append(self._chunk({}, _finish(reason, self._calls > 0) if candidates else "content_filter"))
            out += self._usage_chunk(self.usage) if self.usage is not None else []
        return out


__all__ = ["GeminiAdapter", "from_gemini", "to_gemini"]
