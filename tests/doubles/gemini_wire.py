"""Google Gemini's `generateContent` wire format for the upstream double.

`POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent` (`alt=sse`: one
`GenerateContentResponse` per event, the last with `finishReason` and `usageMetadata`; without
it, a JSON array as the service sends), `GET /v1beta/models`. As strict as the service on what
the gateway sends: no `x-goog-api-key` is 403 `PERMISSION_DENIED`, a wrong one 400 "API key not
valid"; an unknown field anywhere in the request is 400 `INVALID_ARGUMENT` ("Unknown name");
contents must alternate nothing but `user` and `model` turns with non-empty parts of one kind
each; a `functionResponse` must answer a function the conversation called; a key sent as a
bearer token is refused.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

REQUEST_FIELDS = {"contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings"}
GENERATION_FIELDS = {
    "temperature",
    "topP",
    "topK",
    "candidateCount",
    "maxOutputTokens",
    "stopSequences",
    "seed",
    "presencePenalty",
    "frequencyPenalty",
    "responseMimeType",
    "responseSchema",
}
PART_KINDS = {"text", "inlineData", "functionCall", "functionResponse", "fileData"}
FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


class Invalid(ValueError):
    pass


def _error(status: int, state: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": status, "message": message, "status": state}}, status=status)


def _known(obj: Any, fields: set[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise Invalid(f"Invalid value at '{where}': expected an object")
    for name in obj:
        if name not in fields:
            raise Invalid(f"Invalid JSON payload received. Unknown name \"{name}\" at '{where}': Cannot find field.")
    return obj


def _check_part(part: Any, where: str, called: set[str]) -> str:
    kinds = set(_known(part, PART_KINDS | {"thought", "thoughtSignature"}, where)) & PART_KINDS
    if len(kinds) != 1:
        raise Invalid(f"{where}: a part holds exactly one of {sorted(PART_KINDS)}")
    (kind,) = kinds
    value = part[kind]
    if kind == "text" and not isinstance(value, str):
        raise Invalid(f"{where}.text: expected a string")
    if kind == "inlineData":
        _known(value, {"mimeType", "data"}, f"{where}.inlineData")
        if not value.get("mimeType") or not value.get("data"):
            raise Invalid(f"{where}.inlineData: mimeType and data are required")
    if kind == "functionCall":
        _known(value, {"name", "args", "id"}, f"{where}.functionCall")
        if not FUNCTION_NAME.fullmatch(str(value.get("name", ""))) or not isinstance(value.get("args", {}), dict):
            raise Invalid(f"{where}.functionCall: a valid name and object args are required")
        called.add(value["name"])
    if kind == "functionResponse":
        _known(value, {"name", "response", "id"}, f"{where}.functionResponse")
        if value.get("name") not in called:
            raise Invalid(f"{where}.functionResponse: {value.get('name')!r} answers no function call of this turn")
        if not isinstance(value.get("response"), dict):
            raise Invalid(f"{where}.functionResponse.response: expected an object")
    return kind


def validate(body: Any) -> list[str]:
    """The prompt texts of a valid request; `Invalid` with the service's message otherwise."""
    _known(body, REQUEST_FIELDS, "request")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise Invalid("* GenerateContentRequest.contents: contents is not specified")
    texts: list[str] = []
    called: set[str] = set()
    for i, content in enumerate(contents):
        _known(content, {"role", "parts"}, f"contents[{i}]")
        if content.get("role") not in ("user", "model"):
            raise Invalid(f"contents[{i}].role: Please use a valid role: user, model.")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise Invalid(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
        for j, part in enumerate(parts):
            if _check_part(part, f"contents[{i}].parts[{j}]", called) == "text":
                texts.append(part["text"])
    system = body.get("systemInstruction")
    if system is not None:
        _known(system, {"parts", "role"}, "systemInstruction")
        for j, part in enumerate(system.get("parts") or []):
            if _check_part(part, f"systemInstruction.parts[{j}]", called) != "text":
                raise Invalid("systemInstruction: text parts only")
            texts.append(part["text"])
    _known(body.get("generationConfig", {}), GENERATION_FIELDS, "generationConfig")
    for i, tool in enumerate(body.get("tools") or []):
        for j, decl in enumerate(_known(tool, {"functionDeclarations"}, f"tools[{i}]").get("functionDeclarations", [])):
            _known(decl, {"name", "description", "parameters"}, f"tools[{i}].functionDeclarations[{j}]")
            if not FUNCTION_NAME.fullmatch(str(decl.get("name", ""))):
                raise Invalid(f"tools[{i}].functionDeclarations[{j}].name: invalid function name")
    mode_config = _known(body.get("toolConfig", {}), {"functionCallingConfig"}, "toolConfig").get(
        "functionCallingConfig", {}
    )
    _known(mode_config, {"mode", "allowedFunctionNames"}, "toolConfig.functionCallingConfig")
    if mode_config.get("mode", "AUTO") not in ("AUTO", "ANY", "NONE", "VALIDATED"):
        raise Invalid("toolConfig.functionCallingConfig.mode: invalid value")
    return texts


def _forced_call(body: dict[str, Any]) -> str | None:
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    names = [d["name"] for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
    if config.get("mode") != "ANY" or not names:
        return None
    allowed = config.get("allowedFunctionNames") or names
    return str(allowed[0])


def add_routes(
    app: web.Application,
    double: Any,
    record: Callable[[Any, web.Request, Any], None],
    stream: Callable[[web.Request, list[bytes], dict[str, Any] | None, bool], Awaitable[web.StreamResponse]],
) -> None:
    async def generate(request: web.Request) -> web.StreamResponse:
        model, _, method = request.match_info["call"].partition(":")
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        record(double, request, body)
        key = request.headers.get("x-goog-api-key")
        if request.headers.get("Authorization") or not key:
            return _error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")
        if double.keys and key not in double.keys:
            return _error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
        if method not in ("generateContent", "streamGenerateContent"):
            return _error(404, "NOT_FOUND", f"method {method!r} not found")
        if model not in double.models:
            return _error(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta")
        try:
            texts = validate(body)
        except Invalid as exc:
            return _error(400, "INVALID_ARGUMENT", str(exc))
        limit = (body.get("generationConfig") or {}).get("maxOutputTokens")
        words, prompt_tokens, completion_tokens = double.reply(
            {"messages": [{"content": "\n".join(texts)}], "max_tokens": limit}
        )
        call = _forced_call(body)
        usage = {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": completion_tokens,
            "totalTokenCount": prompt_tokens + completion_tokens,
        }
        response_id = uuid.uuid4().hex[:16]

        def response(parts: list[dict[str, Any]], finish: str | None, with_usage: bool) -> dict[str, Any]:
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                candidate["finishReason"] = finish
            out: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": response_id}
            if with_usage:
                out["usageMetadata"] = usage
            return out

        call_parts = [{"functionCall": {"name": call, "args": {"city": "Paris"}}}] if call else []
        if method == "generateContent":
            return web.json_response(response([{"text": "".join(words)}, *call_parts], "STOP", True))
        chunks = [response([{"text": w}], None, False) for w in words]
        chunks.append(response(call_parts or [{"text": ""}], "STOP", True))
        if request.query.get("alt") != "sse":
            return web.json_response(chunks)
        events = [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks]
        return await stream(request, events, double.take_rule(request.path), False)

    async def models(request: web.Request) -> web.Response:
        record(double, request, None)
        if not request.headers.get("x-goog-api-key"):
            return _error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")
        listed = [{"name": f"models/{m}", "supportedGenerationMethods": ["generateContent"]} for m in double.models]
        return web.json_response({"models": listed})

    app.router.add_post("/v1beta/models/{call}", generate)
    app.router.add_get("/v1beta/models", models)
