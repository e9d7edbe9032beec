"""Startup probe for local OpenAI-compatible servers on their well-known ports.

Ollama 11434 (``/api/tags``), LM Studio 1234, llama.cpp server 8080 and vLLM 8001
(``/v1/models``) on 127.0.0.1; 1.5 s per probe; a server counts only when it lists at
least one model. Found servers become endpoints ``local-<provider>`` (free of charge,
no key) unless the config already has an endpoint with that base URL.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

WELL_KNOWN: tuple[tuple[str, int, str], ...] = (
    ("ollama", 11434, "/api/tags"),
    ("lmstudio", 1234, "/v1/models"),
    ("llamacpp", 8080, "/v1/models"),
    ("vllm", 8001, "/v1/models"),
)


@dataclass
class Found:
    provider: str
    base_url: str
    models: list[str]

    @property
    def name(self) -> str:
        return f"local-{self.provider}"


async def _probe(client: httpx.AsyncClient, host: str, provider: str, port: int, path: str) -> Found | None:
    try:
        resp = await client.get(f"http://{host}:{port}{path}")
        if resp.status_code != 200:
            return None
        data = resp.json()
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if provider == "ollama":
        models = [m.get("name") or m.get("model") for m in data.get("models") or [] if isinstance(m, dict)]
    else:
        models = [m.get("id") for m in data.get("data") or [] if isinstance(m, dict)]
    names = [m for m in models if isinstance(m, str) and m]
    if not names:
        return None
    return Found(provider, f"http://{host}:{port}/v1", names)


async def discover(
    host: str = "127.0.0.1", timeout: float = 1.5, ports: tuple[tuple[str, int, str], ...] = WELL_KNOWN
) -> list[Found]:
    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        results = await asyncio.gather(*(_probe(client, host, p, port, path) for p, port, path in ports))
    return [r for r in results if r is not None]
