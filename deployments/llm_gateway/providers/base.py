"""Adapter interface shared by the provider translations."""

from __future__ import annotations

import abc
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from deployments.llm_gateway.sse import SSEEvent, SSEParser, encode_data

Kind = Literal["chat", "completions", "embeddings"]


class UpstreamStreamError(Exception):
    """The upstream sent an error event or malformed data inside a stream."""


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_openai(self) -> dict[str, int]:
        """OpenAI's `usage` object."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total,
        }


@dataclass(slots=True)
class UpstreamRequest:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    # the exact bytes to send, when a signature covers them; the URL is then sent as it is
    content: bytes | None = None


@dataclass(frozen=True, slots=True)
class ProbeRequest:
    """What the health prober sends for one endpoint: a ``GET`` that spends no tokens."""

    url: str
    headers: dict[str, str]
    # wall-clock time after which the headers are no longer accepted (a signature), else None
    expires_at: float | None = None


class EventReader(Protocol):
    """Upstream stream bytes in, whole events out (SSE by default; AWS event-stream for Bedrock)."""

    def feed(self, chunk: bytes) -> list[SSEEvent]: ...

    def flush(self) -> list[SSEEvent]: ...


def estimate_tokens(text: str) -> int:
    """Rough token count (about four characters per token) when the upstream gives none."""
    return max(1, (len(text) + 3) // 4) if text else 0


def prompt_text(body: dict[str, Any]) -> str:
    """All prompt text of a chat/completions/embeddings body, for estimates."""
    parts: list[str] = []
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    for key in ("prompt", "input"):
        value = body.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    return "\n".join(parts)


class Adapter(abc.ABC):
    """One upstream wire format. Subclasses translate requests, responses and streams."""

    name = "base"
    kinds: frozenset[str] = frozenset({"chat", "completions", "embeddings"})

    @abc.abstractmethod
    def build(
        self, kind: Kind, body: dict[str, Any], model: str, key: str | None, base_url: str, stream_usage: bool
    ) -> UpstreamRequest:
        """Implemented by each wire format."""

    @abc.abstractmethod
    def parse(self, kind: Kind, data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage | None]:
        """Implemented by each wire format."""

    @abc.abstractmethod
    def stream(self, kind: Kind, model: str, client_wants_usage: bool) -> StreamTranslator:
        """Implemented by each wire format."""

    def models_url(self, base_url: str) -> str:
        return f"{base_url}/models"

    def event_reader(self) -> EventReader:
        return SSEParser()

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    def probe_request(self, base_url: str, key: str | None) -> ProbeRequest:
        """The health prober's request: the model listing with this format's key headers."""
        return ProbeRequest(self.models_url(base_url), self.auth_headers(key))


@dataclass
class Reassembler:
    """Builds the non-streaming response from OpenAI chunks (for the cache)."""

    kind: Kind
    id: str = ""
    model: str = ""
    created: int = 0
    choices: dict[int, dict[str, Any]] = field(default_factory=dict)

    def add(self, chunk: dict[str, Any]) -> None:
        self.id = self.id or chunk.get("id", "")
        self.model = self.model or chunk.get("model", "")
        self.created = self.created or int(chunk.get("created") or 0)
        for choice in chunk.get("choices") or []:
            idx = int(choice.get("index", 0))
            slot = self.choices.setdefault(idx, {"text": [], "finish_reason": None, "tool_calls": {}})
            if choice.get("finish_reason"):
                slot["finish_reason"] = choice["finish_reason"]
            if self.kind == "completions":
                slot["text"].append(choice.get("text") or "")
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                slot["text"].append(delta["content"])
            for call in delta.get("tool_calls") or []:
                cidx = int(call.get("index", 0))
                acc = slot["tool_calls"].setdefault(
                    cidx, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
                acc["id"] = call.get("id") or acc["id"]
                fn = call.get("function") or {}
                acc["function"]["name"] += fn.get("name") or ""
                acc["function"]["arguments"] += fn.get("arguments") or ""

    def text(self) -> str:
        return "".join("".join(c["text"]) for c in self.choices.values())

    def build(self, usage: Usage) -> dict[str, Any]:
        usage_obj = usage.as_openai()
        choices = []
        for idx in sorted(self.choices):
            slot = self.choices[idx]
            if self.kind == "completions":
                choices.append(
                    {
                        "index": idx,
                        "text": "".join(slot["text"]),
                        "finish_reason": slot["finish_reason"],
                        "logprobs": None,
                    }
                )
                continue
            message: dict[str, Any] = {"role": "assistant", "content": "".join(slot["text"]) or None}
            if slot["tool_calls"]:
                message["tool_calls"] = [slot["tool_calls"][i] for i in sorted(slot["tool_calls"])]
            choices.append({"index": idx, "message": message, "finish_reason": slot["finish_reason"]})
        obj = "text_completion" if self.kind == "completions" else "chat.completion"
        return {
            "id": self.id,
            "object": obj,
            "created": self.created,
            "model": self.model,
            "choices": choices,
            "usage": usage_obj,
        }


class StreamTranslator(abc.ABC):
    """Turns upstream SSE events into OpenAI ``data:`` lines for the client.

    ``feed`` returns the bytes to send (possibly none) and raises
    :class:`UpstreamStreamError` on an error event or malformed data. ``done`` turns
    true at the upstream's end marker; ``usage`` holds reported usage if any.
    """

    def __init__(self, kind: Kind, model: str, client_wants_usage: bool) -> None:
        self.kind = kind
        self.model = model
        self.client_wants_usage = client_wants_usage
        self.done = False
        self.usage: Usage | None = None
        self.reassembler = Reassembler(kind)

    @abc.abstractmethod
    def feed(self, event: SSEEvent) -> list[bytes]:
        """Implemented by each wire format."""

    def final_usage(self, prompt_estimate: int) -> Usage:
        if self.usage is not None:
            return self.usage
        return Usage(prompt_estimate, estimate_tokens(self.reassembler.text()), estimated=True)


class TranslatedStream(StreamTranslator):
    """A stream in another wire format, re-encoded as OpenAI chunks of one choice."""

    def __init__(self, kind: Kind, model: str, client_wants_usage: bool) -> None:
        super().__init__(kind, model, client_wants_usage)
        self._id = ""
        self._created = int(time.time())

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        obj = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        self.reassembler.add(obj)
        return encode_data(json.dumps(obj, separators=(",", ":")))

    def _usage_chunk(self, usage: Usage) -> list[bytes]:
        """The closing usage chunk (no choices), when the client asked for usage."""
        if not self.client_wants_usage:
            return []
        obj = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._created,
            "model": self.model,
            "choices": [],
            "usage": usage.as_openai(),
        }
        return [encode_data(json.dumps(obj, separators=(",", ":")))]


def loads_event(data: str) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except ValueError as exc:
        raise UpstreamStreamError(f"malformed event from upstream: {exc}") from None
    if not isinstance(obj, dict):
        raise UpstreamStreamError("malformed event from upstream: not an object")
    return obj
