"""A small client for an OpenAI-compatible chat API (rayfleet's own LLM gateway by default)."""

from __future__ import annotations

import os

import httpx

from actors.tasknet.ledger import Reject
from actors.tasknet.settings import LlmParams


def api_key(settings: LlmParams) -> str:
    """The key from the environment variable named in the settings (first of a comma list)."""
    raw = os.environ.get(str(settings.get("api_key_env", "LLM_PROXY_API_KEYS")), "")
    return raw.split(",")[0].strip()


async def chat(settings: LlmParams, system: str, user: str, client: httpx.AsyncClient | None = None) -> str:
    """The assistant's reply text; Reject(503) when the gateway is unset, unreachable or failing."""
    base = str(settings.get("base_url") or "").rstrip("/")
    if not base:
        raise Reject("no LLM gateway configured (llm.base_url)", 503)
    body = {
        "model": settings.get("model", "tasknet-agent"),
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "max_tokens": int(settings.get("max_tokens", 512)),
        "temperature": 0,
    }
    headers = {"Authorization": f"Bearer {api_key(settings)}"}
    own = client is None
    http = client or httpx.AsyncClient(timeout=float(settings.get("timeout_s", 30)), trust_env=False)
    try:
        response = await http.post(base + "/chat/completions", json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise Reject(f"LLM gateway unreachable: {type(exc).__name__}", 503) from exc
    finally:
        if own:
            await http.aclose()
    if response.status_code != 200:
        raise Reject(f"LLM gateway answered {response.status_code}", 503)
    try:
        return str(response.json()["choices"][0]["message"]["content"] or "")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise Reject("LLM gateway sent a malformed completion", 503) from exc
