"""An upstream test double: a real HTTP server speaking OpenAI's and Anthropic's wire formats.

Run it as its own process::

    python -m tests.doubles.llm_upstream --port 9100 --name up1

Routes: ``GET /v1/models``, ``POST /v1/chat/completions``, ``/v1/completions``,
``/v1/embeddings`` (OpenAI), ``POST /v1/messages`` (Anthropic), Azure OpenAI's deployment
routes (``azure_openai_wire``), Gemini's ``generateContent`` (``gemini_wire``) and Bedrock's
Converse API with SigV4 (``bedrock_wire``), all
streaming-capable where the real APIs are. Fault injection through ``POST /_double/faults`` with
``{"rules": [rule, ...]}``; a rule applies to the next ``times`` matching requests
(``-1``: until cleared) and may set ``status`` (+ ``body``, ``retry_after``),
``latency_ms`` (before the status line), ``chunk_delay_ms``, ``cut_after`` (close the
stream after N content events), ``stall_after`` (stop sending after N events, keep the
socket open), ``malformed_after`` (send invalid JSON after N events),
``error_event_after`` (send an error event after N events). ``GET /_double/requests``
returns what was received (bodies, the credential headers and ``traceparent``), ``DELETE`` clears it.
Token usage is deterministic: prompt tokens are ``ceil(chars / 4)`` of the prompt text,
completion tokens ``min(max_tokens, words)`` of the canned reply. A prompt starting with
``echo:`` is answered with the rest of the prompt, in 5-character pieces (a stream then
splits words and links across events).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections import deque
from typing import Any

from aiohttp import web

from tests.doubles import azure_openai_wire, bedrock_wire, gemini_wire

ECHO = "echo:"
REPLY_WORDS = ["Hello", " from", " the", " upstream", " double", ".", " All", " good", "."]


def _tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4) if text else 0


def _prompt_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for msg in body.get("messages") or []:
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    for key in ("prompt", "input"):
        value = body.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    return "\n".join(parts)


class Double:
    def __init__(self, name: str, models: list[str], keys: list[str], latency_ms: float) -> None:
        self.name = name
        self.models = models
        self.keys = set(keys)
        self.latency = latency_ms / 1000.0
        self.rules: list[dict[str, Any]] = []
        self.requests: deque[dict[str, Any]] = deque(maxlen=2000)
        self.count = 0

    def take_rule(self, path: str) -> dict[str, Any] | None:
        for rule in self.rules:
            if rule.get("path") and rule["path"] != path:
                continue
            times = rule.get("times", 1)
            if times == 0:
                continue
            if times > 0:
                rule["times"] = times - 1
            return rule
        return None

    def reply(self, body: dict[str, Any]) -> tuple[list[str], int, int]:
        prompt = _prompt_text(body)
        if prompt.startswith(ECHO):
            text = prompt[len(ECHO) :]
            pieces = [text[i : i + 5] for i in range(0, len(text), 5)] or [""]
            return pieces, _tokens(prompt), len(pieces)
        limit = body.get("max_tokens") or body.get("max_completion_tokens") or len(REPLY_WORDS)
        words = [f"[{self.name}]", *REPLY_WORDS]
        words = words[: max(1, min(int(limit), len(words)))]
        return words, _tokens(_prompt_text(body)), len(words)


async def _authorised(double: Double, request: web.Request) -> bool:
    if not double.keys:
        return True
    bearer = request.headers.get("Authorization", "")
    key = bearer[7:] if bearer.startswith("Bearer ") else request.headers.get("x-api-key", "")
    return key in double.keys


def _record(double: Double, request: web.Request, body: Any) -> None:
    double.count += 1
    double.requests.append(
        {
            "path": request.path,
            "body": body,
            "time": time.time(),
            "authorization": request.headers.get("Authorization"),
            "x_api_key": request.headers.get("x-api-key"),
            "api_key": request.headers.get("api-key"),
            "x_goog_api_key": request.headers.get("x-goog-api-key"),
            "query": dict(request.query),
            "headers": {k.lower(): v for k, v in request.headers.items() if k.lower().startswith("x-extra")},
            "traceparent": request.headers.get("traceparent"),
        }
    )


async def _fault_status(rule: dict[str, Any] | None, anthropic: bool) -> web.Response | None:
    if rule is None:
        return None
    if rule.get("latency_ms"):
        await asyncio.sleep(rule["latency_ms"] / 1000.0)
    status = rule.get("status")
    if not status or status < 300:
        return None
    headers = {}
    if rule.get("retry_after") is not None:
        headers["Retry-After"] = str(rule["retry_after"])
    if "body" in rule:
        return web.Response(status=status, text=rule["body"], headers=headers, content_type="application/json")
    if anthropic:
        payload = {"type": "error", "error": {"type": "api_error", "message": f"injected {status}"}}
    else:
        payload = {"error": {"message": f"injected {status}", "type": "server_error", "code": None}}
    return web.json_response(payload, status=status, headers=headers)


def _sse(obj: Any, event: str | None = None) -> bytes:
    data = obj if isinstance(obj, str) else json.dumps(obj)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


async def _stream(
    request: web.Request, events: list[bytes], rule: dict[str, Any] | None, anthropic: bool
) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    rule = rule or {}
    delay = rule.get("chunk_delay_ms", 0) / 1000.0
    for i, event in enumerate(events):
        if rule.get("cut_after") is not None and i >= rule["cut_after"]:
            request.transport.close() if request.transport else None
            return resp
        if rule.get("stall_after") is not None and i >= rule["stall_after"]:
            await asyncio.sleep(3600)
        if rule.get("malformed_after") is not None and i >= rule["malformed_after"]:
            await resp.write(b"data: {not json\n\n")
            await resp.write_eof()
            return resp
        if rule.get("error_event_after") is not None and i >= rule["error_event_after"]:
            if anthropic:
                await resp.write(
                    _sse({"type": "error", "error": {"type": "overloaded_error", "message": "injected"}}, "error")
                )
            else:
                await resp.write(_sse({"error": {"message": "injected stream error", "type": "server_error"}}))
            await resp.write_eof()
            return resp
        if delay:
            await asyncio.sleep(delay)
        await resp.write(event)
    await resp.write_eof()
    return resp


async def openai_answer(double: Double, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
    """OpenAI's answer to an authorised chat, completions or embeddings request (Azure's too)."""
    rule = double.take_rule(request.path)
    fault = await _fault_status(rule, False)
    if fault is not None:
        return fault
    if double.latency:
        await asyncio.sleep(double.latency)
    model = body.get("model", "unknown")
    created = int(time.time())
    if request.path.endswith("/embeddings"):
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [((hash(str(x)) >> (4 * d)) % 1000) / 1000.0 for d in range(8)],
            }
            for i, x in enumerate(inputs)
        ]
        tokens = _tokens(_prompt_text(body))
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )
    chat = request.path.endswith("/chat/completions")
    words, prompt_tokens, completion_tokens = double.reply(body)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    cid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:12]
    n = int(body.get("n") or 1)
    if not body.get("stream"):
        text = "".join(words)
        if chat:
            choices = [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
                for i in range(n)
            ]
            obj = "chat.completion"
        else:
            choices = [{"index": i, "text": text, "finish_reason": "stop", "logprobs": None} for i in range(n)]
            obj = "text_completion"
        return web.json_response(
            {"id": cid, "object": obj, "created": created, "model": model, "choices": choices, "usage": usage}
        )
    obj = "chat.completion.chunk" if chat else "text_completion"

    def chunk(delta: dict[str, Any] | str, finish: str | None = None) -> bytes:
        if chat:
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": delta, "finish_reason": finish}
        return _sse({"id": cid, "object": obj, "created": created, "model": model, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})] if chat else []
    events += [chunk({"content": w} if chat else w) for w in words]
    events.append(chunk({} if chat else "", "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(
            _sse({"id": cid, "object": obj, "created": created, "model": model, "choices": [], "usage": usage})
        )
    events.append(b"data: [DONE]\n\n")
    return await _stream(request, events, rule, False)


def make_app(double: Double) -> web.Application:
    app = web.Application()

    async def models(request: web.Request) -> web.Response:
        _record(double, request, None)
        rule = double.take_rule(request.path)
        fault = await _fault_status(rule, False)
        if fault is not None:
            return fault
        return web.json_response(
            {
                "object": "list",
                "data": [{"id": m, "object": "model", "created": 0, "owned_by": double.name} for m in double.models],
            }
        )

    async def openai(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response(
                {"error": {"message": "invalid JSON", "type": "invalid_request_error"}}, status=400
            )
        _record(double, request, body)
        if not await _authorised(double, request):
            return web.json_response(
                {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}},
                status=401,
            )
        return await openai_answer(double, request, body)

    async def messages(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response(
                {"type": "error", "error": {"type": "invalid_request_error", "message": "invalid JSON"}}, status=400
            )
        _record(double, request, body)
        if not await _authorised(double, request):
            return web.json_response(
                {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}, status=401
            )
        if "max_tokens" not in body or request.headers.get("anthropic-version") is None:
            return web.json_response(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "max_tokens and anthropic-version are required",
                    },
                },
                status=400,
            )
        rule = double.take_rule(request.path)
        fault = await _fault_status(rule, True)
        if fault is not None:
            return fault
        if double.latency:
            await asyncio.sleep(double.latency)
        model = body.get("model", "unknown")
        words, prompt_tokens, completion_tokens = double.reply(body)
        mid = "msg_" + uuid.uuid4().hex[:12]
        tools = body.get("tools") or []
        use_tool = bool(tools) and (body.get("tool_choice") or {}).get("type") in ("any", "tool")
        if not body.get("stream"):
            content: list[dict[str, Any]] = [{"type": "text", "text": "".join(words)}]
            if use_tool:
                content.append(
                    {"type": "tool_use", "id": "toolu_1", "name": tools[0]["name"], "input": {"city": "Paris"}}
                )
            return web.json_response(
                {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": "tool_use" if use_tool else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
                }
            )
        events = [
            _sse(
                {
                    "type": "message_start",
                    "message": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "usage": {"input_tokens": prompt_tokens, "output_tokens": 1},
                    },
                },
                "message_start",
            ),
            _sse(
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            ),
            _sse({"type": "ping"}, "ping"),
        ]
        events += [
            _sse(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}},
                "content_block_delta",
            )
            for w in words
        ]
        events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        if use_tool:
            events += [
                _sse(
                    {
                        "type": "content_block_start",
                        "index": 1,
                        "content_block": {"type": "tool_use", "id": "toolu_1", "name": tools[0]["name"], "input": {}},
                    },
                    "content_block_start",
                ),
                _sse(
                    {
                        "type": "content_block_delta",
                        "index": 1,
                        "delta": {"type": "input_json_delta", "partial_json": '{"city": '},
                    },
                    "content_block_delta",
                ),
                _sse(
                    {
                        "type": "content_block_delta",
                        "index": 1,
                        "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'},
                    },
                    "content_block_delta",
                ),
                _sse({"type": "content_block_stop", "index": 1}, "content_block_stop"),
            ]
        events.append(
            _sse(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use" if use_tool else "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": completion_tokens},
                },
                "message_delta",
            )
        )
        events.append(_sse({"type": "message_stop"}, "message_stop"))
        return await _stream(request, events, rule, True)

    async def set_faults(request: web.Request) -> web.Response:
        payload = await request.json()
        double.rules = list(payload.get("rules") or [])
        return web.json_response({"rules": double.rules})

    async def clear_faults(request: web.Request) -> web.Response:
        double.rules = []
        return web.json_response({"rules": []})

    async def get_requests(request: web.Request) -> web.Response:
        return web.json_response({"count": double.count, "requests": list(double.requests)})

    async def clear_requests(request: web.Request) -> web.Response:
        double.requests.clear()
        double.count = 0
        return web.json_response({"count": 0})

    app.router.add_get("/v1/models", models)
    for path in ("/v1/chat/completions", "/v1/completions", "/v1/embeddings"):
        app.router.add_post(path, openai)
    app.router.add_post("/v1/messages", messages)
    azure_openai_wire.add_routes(app, double, _record, openai_answer)
    gemini_wire.add_routes(app, double, _record, _stream)
    bedrock_wire.add_routes(app, double, _record, _stream)
    app.router.add_post("/_double/faults", set_faults)
    app.router.add_delete("/_double/faults", clear_faults)
    app.router.add_get("/_double/requests", get_requests)
    app.router.add_delete("/_double/requests", clear_requests)
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", default="double")
    parser.add_argument("--models", default="gpt-4o-mini,gpt-4o,claude-sonnet-4-6,llama3")
    parser.add_argument("--keys", default="", help="accepted API keys, comma-separated (empty: any)")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    double = Double(
        args.name, [m for m in args.models.split(",") if m], [k for k in args.keys.split(",") if k], args.latency_ms
    )
    web.run_app(make_app(double), host=args.host, port=args.port, print=None, access_log=None, shutdown_timeout=0.5)


if __name__ == "__main__":
    main()
