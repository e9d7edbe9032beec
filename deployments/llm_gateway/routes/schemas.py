"""Request-body schemas of the inference routes, for the OpenAPI document only.

The gateway reads bodies itself (raw-byte limits first, then ``validation.py``), so the
schemas document the fields it checks and forwards; any other OpenAI field passes through.
"""

from __future__ import annotations

from typing import Any

from deployments.llm_gateway.reload import RELOADABLE

_NUMBERS: dict[str, Any] = {
    "temperature": {"type": "number", "minimum": 0, "maximum": 2},
    "top_p": {"type": "number", "minimum": 0, "maximum": 1},
    "max_tokens": {"type": "integer", "minimum": 1, "maximum": 4096},
    "n": {"type": "integer", "minimum": 1, "maximum": 4},
    "stream": {"type": "boolean"},
    "stream_options": {"type": "object", "properties": {"include_usage": {"type": "boolean"}}},
}
_TEXT = {"type": "string", "maxLength": 2000}

CHAT: dict[str, Any] = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "messages": {
            "type": "array",
            "minItems": 1,
            "maxItems": 50,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"type": "string", "enum": ["system", "user", "assistant"]},
                    "content": {
                        "anyOf": [
                            _TEXT,
                            {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {"type": {"type": "string", "enum": ["text"]}, "text": _TEXT},
                                    "required": ["type", "text"],
                                },
                            },
                        ]
                    },
                },
            },
        },
        **_NUMBERS,
    },
}
COMPLETIONS: dict[str, Any] = {
    "type": "object",
    "required": ["model", "prompt"],
    "properties": {"model": {"type": "string", "minLength": 1}, "prompt": _TEXT, **_NUMBERS},
}
EMBEDDINGS: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "input": {"anyOf": [_TEXT, {"type": "array", "minItems": 1, "items": _TEXT}]},
    },
}


def body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


RELOAD_BODY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {name: {"type": "object"} for name in sorted(RELOADABLE)},
}
