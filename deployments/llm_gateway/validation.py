"""Shape checks of an inference body, after the raw-byte limits and the parse.

Only what the gateway itself reads is checked here (model, messages and their text,
prompt/input, stream, the token and sampling numbers): a wrong type is the client's
400, never a 500 in the gateway or a 502 from an upstream that refuses to encode it.
"""

from __future__ import annotations

from typing import Any

from deployments.llm_gateway.errors import GatewayError

_NUMBERS = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
_COUNTS = ("n", "max_tokens", "max_completion_tokens")
MAX_CHOICES = 128


def _bad(message: str, code: str = "invalid_request") -> GatewayError:
    return GatewayError(400, message, code=code)


def _check_messages(messages: Any, max_messages: int | None) -> None:
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise _bad("'messages' must be a non-empty list of objects", "invalid_messages")
    if max_messages is not None and len(messages) > max_messages:
        raise GatewayError(
            400,
            f"Too many messages: at most {max_messages} per request",
            code="too_many_messages",
            error_class="max_messages",
        )
    for i, message in enumerate(messages):
        if not isinstance(message.get("role", ""), str):
            raise _bad(f"messages[{i}].role must be a string", "invalid_messages")
        content = message.get("content")
        if content is None or isinstance(content, str):
            continue
        if not isinstance(content, list):
            raise _bad(f"messages[{i}].content must be a string or a list of parts", "invalid_messages")
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                raise _bad(f"messages[{i}].content[{j}] must be an object", "invalid_messages")
            if "text" in part and not isinstance(part["text"], str):
                raise _bad(f"messages[{i}].content[{j}].text must be a string", "invalid_messages")


def _check_text_list(body: dict[str, Any], field: str) -> None:
    value = body.get(field)
    if isinstance(value, str):
        return
    if not isinstance(value, list) or not value:
        raise _bad(f"'{field}' is required (a string or a non-empty list)", f"missing_{field}")


def _check_numbers(body: dict[str, Any]) -> None:
    for name in _NUMBERS:
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise _bad(f"'{name}' must be a number", "invalid_number")
    for name in _COUNTS:
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise _bad(f"'{name}' must be a positive integer", "invalid_number")
    if isinstance(body.get("n"), int) and body["n"] > MAX_CHOICES:
        raise _bad(f"'n' is at most {MAX_CHOICES}", "invalid_number")


def check_inference(kind: str, body: dict[str, Any], max_messages: int | None) -> tuple[str, bool]:
    """Validate ``body`` for ``kind``; returns (model, stream). ``max_messages`` None: no cap."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("'model' is required and must be a string", "missing_model")
    if kind == "chat":
        _check_messages(body.get("messages"), max_messages)
    elif kind == "completions":
        _check_text_list(body, "prompt")
    else:
        _check_text_list(body, "input")
    _check_numbers(body)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("'stream' must be a boolean", "invalid_stream")
    if stream and kind == "embeddings":
        raise _bad("embeddings cannot be streamed", "invalid_stream")
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise _bad("'stream_options' must be an object", "invalid_stream")
    return model, stream
