"""AWS Bedrock's Converse API for the upstream double: SigV4 checked, event-stream frames sent.

`POST /model/{modelId}/converse` and `/converse-stream`. The signature is verified the way AWS
does, written here from the SigV4 specification (not with the signer the gateway uses): the
canonical request from the raw path as received (so a model id whose `:` was decoded after
signing fails, as on AWS), the signed headers, the payload hash; the scope's date, region
(`us-east-1`) and service (`bedrock`); `X-Amz-Date` within five minutes; the session token of a
temporary key. Failures are 403 with `x-amzn-ErrorType` as AWS sends. Bodies are checked like
the service checks them (`ValidationException`): known fields only, a conversation that starts
with a user turn and alternates, one kind per content block, `toolResult` answering an earlier
`toolUse`, `toolConfig` present whenever tool blocks are. Streams are AWS event-stream frames
(prelude, headers, payload, CRCs).

`GET /async-invoke` (ListAsyncInvokes, the gateway's health probe) is checked the same way: the
same SigV4 verification (the query string is part of the canonical request), known query
parameters only, `maxResults` a whole number from 1 to 1000. A fault rule with a 5xx `status`
answers as the service does when it fails (`InternalServerException`, `ServiceUnavailableException`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
import time
import zlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from aiohttp import web

REGION, SERVICE = "us-east-1", "bedrock"
FIELDS = {"messages", "system", "inferenceConfig", "toolConfig", "additionalModelRequestFields"}
INFERENCE_FIELDS = {"maxTokens", "temperature", "topP", "stopSequences"}
BLOCK_KINDS = {"text", "image", "toolUse", "toolResult", "document"}
LIST_ASYNC_QUERY = {
    "submitTimeAfter",
    "submitTimeBefore",
    "statusEquals",
    "maxResults",
    "nextToken",
    "sortBy",
    "sortOrder",
}
FAILURES = {500: "InternalServerException", 503: "ServiceUnavailableException"}


class Refused(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message

    def response(self) -> web.Response:
        return web.json_response({"message": self.message}, status=self.status, headers={"x-amzn-ErrorType": self.kind})


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def verify_sigv4(request: web.Request, body: bytes, keys: dict[str, tuple[str, str | None]]) -> None:
    """Raise `Refused` unless the request carries a valid SigV4 signature by one of `keys`."""
    auth = request.headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        raise Refused(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
    pairs = [part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 ") :].split(",")]
    if any(len(pair) != 2 for pair in pairs):
        raise Refused(403, "IncompleteSignatureException", "Authorization header is malformed.")
    fields = dict(pairs)
    scope_parts = fields.get("Credential", "").split("/")
    if len(scope_parts) != 5:
        raise Refused(403, "IncompleteSignatureException", "Authorization header requires a Credential parameter.")
    access_key, date, region, service, terminal = scope_parts
    amz_date = request.headers.get("X-Amz-Date", "")
    if access_key not in keys:
        raise Refused(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
    secret, token = keys[access_key]
    if (date, region, service, terminal) != (amz_date[:8], REGION, SERVICE, "aws4_request"):
        raise Refused(403, "InvalidSignatureException", "Credential should be scoped to a valid region and service.")
    signed_at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()
    if abs(time.time() - signed_at) > 300:
        raise Refused(403, "InvalidSignatureException", "Signature expired")
    signed = fields.get("SignedHeaders", "").split(";")
    if "host" not in signed or "x-amz-date" not in signed:
        raise Refused(403, "InvalidSignatureException", "host and x-amz-date must be signed")
    if token is not None and (
        request.headers.get("X-Amz-Security-Token") != token or "x-amz-security-token" not in signed
    ):
        raise Refused(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
    canonical_headers = "".join(f"{name}:{' '.join(request.headers.get(name, '').split())}\n" for name in signed)
    query = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(request.query.items()))
    canonical = "\n".join(
        [
            request.method,
            quote(request.raw_path.split("?", 1)[0], safe="/~"),
            query,
            canonical_headers,
            ";".join(signed),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode(), date), region), service), "aws4_request")
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, fields.get("Signature", "")):
        raise Refused(
            403,
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided.",
        )


def _invalid(message: str) -> Refused:
    return Refused(400, "ValidationException", message)


def _check_block(block: Any, where: str, uses: set[str]) -> str:
    if not isinstance(block, dict) or len(set(block) & BLOCK_KINDS) != 1 or set(block) - BLOCK_KINDS:
        raise _invalid(f"{where}: a content block holds exactly one of {sorted(BLOCK_KINDS)}")
    (kind,) = block
    value = block[kind]
    if kind == "text" and not isinstance(value, str):
        raise _invalid(f"{where}.text: expected a string")
    if kind == "image" and (value.get("format") not in ("png", "jpeg", "gif", "webp") or not value.get("source")):
        raise _invalid(f"{where}.image: format and source.bytes are required")
    if kind == "toolUse":
        if not value.get("toolUseId") or not value.get("name") or not isinstance(value.get("input"), dict):
            raise _invalid(f"{where}.toolUse: toolUseId, name and an object input are required")
        uses.add(value["toolUseId"])
    if kind == "toolResult" and value.get("toolUseId") not in uses:
        raise _invalid(f"{where}.toolResult: toolUseId does not match any toolUse")
    return kind


def validate(body: Any) -> list[str]:
    """The prompt texts of a valid Converse request; `Refused` (ValidationException) otherwise."""
    if not isinstance(body, dict) or set(body) - FIELDS:
        raise _invalid(
            f"extraneous key(s) {sorted(set(body) - FIELDS) if isinstance(body, dict) else ''} are not permitted"
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or messages[0].get("role") != "user":
        raise _invalid("A conversation must start with a user message.")
    texts, uses, kinds = [], set(), set()
    for i, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant") or (i and message["role"] == messages[i - 1]["role"]):
            raise _invalid("A conversation must alternate between user and assistant roles.")
        for j, block in enumerate(message.get("content") or [None]):
            kind = _check_block(block, f"messages.{i}.content.{j}", uses)
            kinds.add(kind)
            if kind == "text":
                texts.append(block["text"])
    texts += [b.get("text", "") for b in body.get("system") or []]
    if set(body.get("inferenceConfig") or {}) - INFERENCE_FIELDS:
        raise _invalid("inferenceConfig: extraneous key")
    if kinds & {"toolUse", "toolResult"} and not body.get("toolConfig"):
        raise _invalid("The toolConfig field must be defined when using toolUse and toolResult content blocks.")
    return texts


def frame(event: str, payload: dict[str, Any], message_type: str = "event") -> bytes:
    """One AWS event-stream message: prelude (lengths + CRC), string headers, payload, message CRC."""
    headers = b""
    for name, value in ((":event-type", event), (":content-type", "application/json"), (":message-type", message_type)):
        if message_type == "exception" and name == ":event-type":
            name = ":exception-type"
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def signing_keys(double: Any) -> dict[str, tuple[str, str | None]]:
    """The double's accepted keys (`ACCESS_KEY_ID:SECRET[:SESSION_TOKEN]`) by access key id."""
    keys = {}
    for key in double.keys:
        parts = key.split(":")
        if len(parts) in (2, 3):
            keys[parts[0]] = (parts[1], parts[2] if len(parts) == 3 else None)
    return keys


def check_list_async_query(query: Any) -> None:
    """ListAsyncInvokes' query parameters as the service validates them (`ValidationException`)."""
    unknown = set(query) - LIST_ASYNC_QUERY
    if unknown:
        raise _invalid(f"extraneous query parameter(s) {sorted(unknown)} are not permitted")
    limit = query.get("maxResults")
    if limit is not None and not (limit.isdigit() and 1 <= int(limit) <= 1000):
        raise _invalid("maxResults: must be a whole number from 1 to 1000")


def add_routes(
    app: web.Application,
    double: Any,
    record: Callable[[Any, web.Request, Any], None],
    stream: Callable[[web.Request, list[bytes], dict[str, Any] | None, bool], Awaitable[web.StreamResponse]],
) -> None:
    async def converse(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        record(double, request, body)
        try:
            verify_sigv4(request, raw, signing_keys(double))
            if body is None:
                raise _invalid("The request body is not valid JSON")
            model = request.match_info["model"]
            if model not in double.models:
                raise Refused(
                    404,
                    "ResourceNotFoundException",
                    "Could not resolve the foundation model from the provided model identifier.",
                )
            texts = validate(body)
        except Refused as refused:
            return refused.response()
        limit = (body.get("inferenceConfig") or {}).get("maxTokens")
        words, prompt_tokens, completion_tokens = double.reply(
            {"messages": [{"content": "\n".join(texts)}], "max_tokens": limit}
        )
        choice = (body.get("toolConfig") or {}).get("toolChoice") or {}
        tools = [t["toolSpec"]["name"] for t in (body.get("toolConfig") or {}).get("tools") or []]
        tool = (
            (choice.get("tool") or {}).get("name")
            if "tool" in choice
            else (tools[0] if "any" in choice and tools else None)
        )
        stop = "tool_use" if tool else "end_turn"
        usage = {
            "inputTokens": prompt_tokens,
            "outputTokens": completion_tokens,
            "totalTokens": prompt_tokens + completion_tokens,
        }
        if request.match_info["action"] == "converse":
            content: list[dict[str, Any]] = [{"text": "".join(words)}]
            if tool:
                content.append({"toolUse": {"toolUseId": "tooluse_1", "name": tool, "input": {"city": "Paris"}}})
            return web.json_response(
                {
                    "output": {"message": {"role": "assistant", "content": content}},
                    "stopReason": stop,
                    "usage": usage,
                    "metrics": {"latencyMs": 1},
                }
            )
        events = [frame("messageStart", {"role": "assistant"})]
        events += [frame("contentBlockDelta", {"delta": {"text": w}, "contentBlockIndex": 0}) for w in words]
        events.append(frame("contentBlockStop", {"contentBlockIndex": 0}))
        if tool:
            events += [
                frame(
                    "contentBlockStart",
                    {"start": {"toolUse": {"toolUseId": "tooluse_1", "name": tool}}, "contentBlockIndex": 1},
                ),
                frame("contentBlockDelta", {"delta": {"toolUse": {"input": '{"city": '}}, "contentBlockIndex": 1}),
                frame("contentBlockDelta", {"delta": {"toolUse": {"input": '"Paris"}'}}, "contentBlockIndex": 1}),
                frame("contentBlockStop", {"contentBlockIndex": 1}),
            ]
        events += [
            frame("messageStop", {"stopReason": stop}),
            frame("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}),
        ]
        rule = double.take_rule(request.path)
        if rule and rule.get("exception_after") is not None:
            cut = rule["exception_after"]
            events = [*events[:cut], frame("throttlingException", {"message": "Too many requests"}, "exception")]
        return await stream(request, events, rule, False)

    async def list_async_invokes(request: web.Request) -> web.Response:
        record(double, request, None)
        try:
            verify_sigv4(request, await request.read(), signing_keys(double))
            check_list_async_query(request.query)
        except Refused as refused:
            return refused.response()
        rule = double.take_rule(request.path)
        status = (rule or {}).get("status") or 200
        if status >= 500:
            kind = FAILURES.get(status, "InternalServerException")
            return Refused(status, kind, "The service is unavailable. Try again later.").response()
        return web.json_response({"asyncInvokeSummaries": []})

    app.router.add_post("/model/{model}/{action:converse|converse-stream}", converse)
    app.router.add_get("/async-invoke", list_async_invokes)
