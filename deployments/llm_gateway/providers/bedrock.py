"""AWS Bedrock's Converse API, translated from and to OpenAI chat completions, signed with SigV4.

`POST {base_url}/model/{modelId}/converse` (JSON) and `/converse-stream` (AWS event-stream
frames, read by `EventStreamReader`), signed with botocore's SigV4 signer for service
`bedrock` in the endpoint's `aws_region`. A key of the endpoint is
`ACCESS_KEY_ID:SECRET_ACCESS_KEY` (or `...:SESSION_TOKEN`). The model id is percent-encoded
in the path and sent exactly as signed (the forwarder keeps signed URLs as they are).

Request: system messages become `system` blocks; `tool_calls` become `toolUse` blocks and
`tool` messages `toolResult` blocks; data-URL images become `image` blocks; sampling goes to
`inferenceConfig`; tools to `toolConfig` (`tool_choice` "none" with tools is refused: Converse
has no such mode). Answers and streams: text and tool use become OpenAI messages and deltas,
stop reasons are mapped, usage comes from `usage` / the `metadata` event.

Health probe: the runtime has no model listing, so the prober sends `GET
{base_url}/async-invoke?maxResults=1` (ListAsyncInvokes), signed like the runtime calls. It is a
read-only runtime operation on the same host (and VPC endpoint or proxy) as the traffic, costs no
tokens, and needs no model id; the control plane's `GET /foundation-models` is another host,
whose health says little about the runtime's, and a large answer. A key without
`bedrock:ListAsyncInvokes` gets 403 AccessDeniedException, which reads as alive like any 4xx.
The signature is made on the replica and is accepted by AWS for five minutes: the probe carries
an expiry (`SIGNED_PROBE_LIFETIME`) after which the prober skips it rather than send it.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any
from urllib.parse import quote

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.eventstream import EventStreamBuffer, ParserError

from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.providers.base import (
    Adapter,
    Kind,
    ProbeRequest,
    StreamTranslator,
    TranslatedStream,
    UpstreamRequest,
    UpstreamStreamError,
    Usage,
    loads_event,
)
from deployments.llm_gateway.providers.parts import append_turn, call_arguments, convert_content, data_url, refuse
from deployments.llm_gateway.sse import SSEEvent

SERVICE = "bedrock"
PROBE_PATH = "/async-invoke?maxResults=1"
SIGNED_PROBE_LIFETIME = 240.0  # AWS refuses a signature older than five minutes
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
INFERENCE = {"max_tokens": "maxTokens", "max_completion_tokens": "maxTokens", "temperature": "temperature"}


def _bad(message: str) -> GatewayError:
    return refuse("bedrock", message)


def _image(url: str) -> dict[str, Any]:
    found = data_url(url)
    if found is None or found[0] not in IMAGE_FORMATS:
        raise _bad("images must be base64 data URLs of PNG, JPEG, GIF or WebP")
    return {"image": {"format": IMAGE_FORMATS[found[0]], "source": {"bytes": found[1]}}}


def _blocks(content: Any) -> list[dict[str, Any]]:
    return convert_content(content, lambda text: {"text": text}, _image, "bedrock")


def _text(content: Any) -> str:
    return "".join(b.get("text", "") for b in _blocks(content))


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    name = (call.get("function") or {}).get("name", "")
    return {"toolUse": {"toolUseId": call.get("id", ""), "name": name, "input": call_arguments(call, "bedrock")}}


def _tool_result(msg: dict[str, Any]) -> dict[str, Any]:
    text = _text(msg.get("content"))
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    content = [{"json": value}] if isinstance(value, dict) else [{"text": text}]
    return {"toolResult": {"toolUseId": msg.get("tool_call_id", ""), "content": content}}


def _tool_config(body: dict[str, Any], history_uses_tools: bool) -> dict[str, Any] | None:
    tools = [t["function"] for t in body.get("tools") or [] if t.get("type") == "function" and t.get("function")]
    if not tools:
        return None
    choice = body.get("tool_choice")
    if choice == "none":
        if history_uses_tools:
            raise _bad('tool_choice "none" cannot be sent with tools: Converse has no such mode')
        return None
    config: dict[str, Any] = {
        "tools": [
            {
                "toolSpec": {
                    "name": fn.get("name", ""),
                    **({"description": fn["description"]} if fn.get("description") else {}),
                    "inputSchema": {"json": fn.get("parameters") or {"type": "object", "properties": {}}},
                }
            }
            for fn in tools
        ]
    }
    if choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif isinstance(choice, dict) and choice.get("function"):
        config["toolChoice"] = {"tool": {"name": choice["function"].get("name", "")}}
    return config


def to_converse(body: dict[str, Any]) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for msg in body.get("messages") or []:
        role = msg.get("role")
        if role in ("system", "developer"):
            text = _text(msg.get("content"))
            if text:
                system.append({"text": text})
        elif role == "user":
            append_turn(messages, "user", _blocks(msg.get("content")))
        elif role == "assistant":
            append_turn(
                messages, "assistant", _blocks(msg.get("content")) + [_tool_use(c) for c in msg.get("tool_calls") or []]
            )
        elif role == "tool":
            append_turn(messages, "user", [_tool_result(msg)])
        else:
            raise _bad(f"unsupported message role {role!r}")
    if not messages or messages[0]["role"] != "user":
        raise _bad("the conversation must start with a user message")
    out: dict[str, Any] = {"messages": messages}
    if system:
        out["system"] = system
    inference = {target: body[source] for source, target in INFERENCE.items() if body.get(source) is not None}
    if body.get("top_p") is not None:
        inference["topP"] = body["top_p"]
    stop = body.get("stop")
    if stop:
        inference["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    if inference:
        out["inferenceConfig"] = inference
    uses_tools = any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"])
    tool_config = _tool_config(body, uses_tools)
    if tool_config is not None:
        out["toolConfig"] = tool_config
    return out


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(int(raw.get("inputTokens") or 0), int(raw.get("outputTokens") or 0))


def from_converse(data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage]:
    blocks = ((data.get("output") or {}).get("message") or {}).get("content") or []
    text = "".join(b.get("text", "") for b in blocks if "text" in b)
    calls = [
        {
            "id": b["toolUse"].get("toolUseId", ""),
            "type": "function",
            "function": {
                "name": b["toolUse"].get("name", ""),
                "arguments": json.dumps(b["toolUse"].get("input") or {}),
            },
        }
        for b in blocks
        if "toolUse" in b
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    usage = _usage(data.get("usage")) or Usage()
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": STOP_REASONS.get(data.get("stopReason") or "", "stop")}
        ],
        "usage": usage.as_openai(),
    }, usage


def credentials(key: str | None) -> Credentials:
    """`ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`; the message never holds the key."""
    parts = (key or "").split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise GatewayError(
            502,
            "bedrock endpoint: a key must be ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]",
            code="upstream_error",
        )
    return Credentials(parts[0], parts[1], parts[2] if len(parts) == 3 else None)


class EventStreamReader:
    """AWS event-stream frames (CRC-checked by botocore) as events: name and JSON payload."""

    def __init__(self) -> None:
        self._buffer = EventStreamBuffer()

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer.add_data(chunk)
        events = []
        try:
            for message in self._buffer:
                kind = message.headers.get(":message-type")
                name = message.headers.get(":exception-type" if kind == "exception" else ":event-type", "")
                payload = message.payload.decode("utf-8", "replace")
                events.append(SSEEvent(f"{kind}:{name}" if kind != "event" else name, payload, b""))
        except ParserError as exc:
            raise UpstreamStreamError(f"malformed event-stream frame from upstream ({type(exc).__name__})") from None
        return events

    def flush(self) -> list[SSEEvent]:
        return []


class BedrockAdapter(Adapter):
    name = "bedrock"
    kinds = frozenset({"chat"})

    def __init__(self, region: str) -> None:
        self.region = region

    def event_reader(self) -> EventStreamReader:
        return EventStreamReader()

    def build(
        self, kind: Kind, body: dict[str, Any], model: str, key: str | None, base_url: str, stream_usage: bool
    ) -> UpstreamRequest:
        if kind != "chat":
            raise GatewayError(400, f"bedrock endpoints serve chat completions only, not {kind}")
        action = "converse-stream" if body.get("stream") else "converse"
        url = f"{base_url}/model/{quote(model, safe='')}/{action}"
        payload = to_converse(body)
        content = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        accept = "application/vnd.amazon.eventstream" if body.get("stream") else "application/json"
        request = AWSRequest("POST", url, data=content, headers={"Content-Type": "application/json", "Accept": accept})
        SigV4Auth(credentials(key), SERVICE, self.region).add_auth(request)
        return UpstreamRequest(url, dict(request.headers.items()), payload, content=content)

    def probe_request(self, base_url: str, key: str | None) -> ProbeRequest:
        """ListAsyncInvokes, signed now; a key that cannot sign sends it unsigned (the service answers 403)."""
        url = base_url + PROBE_PATH
        try:
            creds = credentials(key)
        except GatewayError:
            return ProbeRequest(url, {})
        request = AWSRequest("GET", url, headers={"Accept": "application/json"})
        SigV4Auth(creds, SERVICE, self.region).add_auth(request)
        return ProbeRequest(url, dict(request.headers.items()), time.time() + SIGNED_PROBE_LIFETIME)

    def parse(self, kind: Kind, data: dict[str, Any], model: str) -> tuple[dict[str, Any], Usage | None]:
        return from_converse(data, model)

    def stream(self, kind: Kind, model: str, client_wants_usage: bool) -> StreamTranslator:
        return _ConverseStream(kind, model, client_wants_usage)


class _ConverseStream(TranslatedStream):
    def __init__(self, kind: Kind, model: str, client_wants_usage: bool) -> None:
        super().__init__(kind, model, client_wants_usage)
        self._id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self._finish: str | None = None
        self._tools: dict[int, int] = {}

    def feed(self, event: SSEEvent) -> list[bytes]:
        if event.event.startswith(("exception:", "error:")):
            raise UpstreamStreamError(f"upstream stream error: {event.event.split(':', 1)[1]}")
        obj = loads_event(event.data) if event.data.strip() else {}
        if event.event == "messageStart":
            return [self._chunk({"role": "assistant", "content": ""})]
        if event.event == "contentBlockStart":
            use = (obj.get("start") or {}).get("toolUse")
            if not use:
                return []
            position = self._tools.setdefault(int(obj.get("contentBlockIndex", 0)), len(self._tools))
            call = {"index": position, "id": use.get("toolUseId", ""), "type": "function"}
            return [self._chunk({"tool_calls": [{**call, "function": {"name": use.get("name", ""), "arguments": ""}}]})]
        if event.event == "contentBlockDelta":
            delta = obj.get("delta") or {}
            if "text" in delta:
                return [self._chunk({"content": delta["text"]})]
            if "toolUse" in delta:
                position = self._tools.get(int(obj.get("contentBlockIndex", 0)), 0)
                arguments = (delta["toolUse"] or {}).get("input", "")
                return [self._chunk({"tool_calls": [{"index": position, "function": {"arguments": arguments}}]})]
            return []
        if event.event == "messageStop":
            self._finish = STOP_REASONS.get(obj.get("stopReason") or "", "stop")
            return []
        if event.event == "metadata":
            self.done = True
            self.usage = _usage(obj.get("usage")) or Usage()
            return [self._chunk({}, self._finish or "stop"), *self._usage_chunk(self.usage)]
        return []


__all__ = ["BedrockAdapter", "EventStreamReader", "from_converse", "to_converse"]
