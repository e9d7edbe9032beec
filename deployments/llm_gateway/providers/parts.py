"""Pieces of OpenAI chat messages that every translating adapter reads the same way.

Content (a string or a list of `text` and `image_url` parts), tool-call arguments (a JSON
object in a string) and turns of one role in a row (merged: Anthropic, Gemini and Bedrock want
roles to alternate). What an adapter cannot carry is a 400 that names the provider.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from deployments.llm_gateway.errors import GatewayError

Part = dict[str, Any]


def refuse(provider: str, message: str) -> GatewayError:
    return GatewayError(400, f"{message} ({provider} endpoint)")


def convert_content(
    content: Any, text: Callable[[str], Part], image: Callable[[str], Part], provider: str
) -> list[Part]:
    """The upstream parts of a message's `content`, built by `text` and `image` (from its URL)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [text(content)] if content else []
    parts: list[Part] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            parts.append(text(part.get("text", "")))
        elif kind == "image_url":
            parts.append(image((part.get("image_url") or {}).get("url", "")))
        else:
            raise refuse(provider, f"unsupported content part type {kind!r}")
    return parts


def data_url(url: str) -> tuple[str, str] | None:
    """`(media type, base64 data)` of a base64 data URL; None for any other URL."""
    if not url.startswith("data:") or ";base64," not in url:
        return None
    media, data = url[5:].split(";base64,", 1)
    return media, data


def call_arguments(call: dict[str, Any], provider: str) -> dict[str, Any]:
    """The arguments of an assistant's tool call, which must be a JSON object."""
    try:
        args = json.loads((call.get("function") or {}).get("arguments") or "{}")
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise refuse(provider, "tool_calls arguments must be a JSON object")
    return args


def append_turn(turns: list[dict[str, Any]], role: str, items: list[Part], key: str = "content") -> None:
    """Add a turn, merged into the previous one when it has the same role; nothing when empty."""
    if not items:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1][key].extend(items)
    else:
        turns.append({"role": role, key: list(items)})
