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

from deployments.llm_gateway.config import EndpointConfig
from deployments.llm_gateway.reload import LiveConfig
from deployments.llm_gateway.routing import KeyRing, Router, Target
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

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


class LocalServers:
    """This replica's startup scan (``discovery: true``) and the budget fallback's local target."""

    def __init__(self, live: LiveConfig, router: Router) -> None:
        self.live = live
        self.router = router
        self.found: list[Found] = []
        self.done = not live.current.discovery
        self.local_target = self._local_target()

    def scan_targets(self) -> tuple[tuple[str, int, str], ...]:
        return tuple((t.provider, t.port, t.models_path()) for t in self.live.current.registry.scan_ports)

    async def run(self) -> None:
        """Scan once; what answers becomes an endpoint ``local-<provider>`` unless its URL is configured."""
        try:
            reg = self.live.current.registry
            found = await discover(reg.scan_host, reg.scan_timeout, self.scan_targets())
        finally:
            self.done = True
        known = {e.base_url for e in self.router.endpoints.values()}
        for server in found:
            if server.base_url in known or server.name in self.router.endpoints:
                continue
            cfg = EndpointConfig.model_validate(
                {"provider": server.provider, "base_url": server.base_url, "models": server.models}
            )
            self.router.endpoints[server.name] = cfg
            self.router.keyrings[server.name] = KeyRing([])
            self.found.append(server)
            if self.local_target is None:
                self.local_target = self._local_target()
        self._log()

    def _log(self) -> None:
        if self.found:
            log.info(
                "local model servers found",
                extra={"servers": [{"name": s.name, "base_url": s.base_url, "models": s.models} for s in self.found]},
            )
        else:
            log.warning(
                "no local model server found on the well-known ports (Ollama 11434, LM Studio 1234, "
                "llama.cpp 8080, vLLM 8001); configure an upstream in config/llm_gateway.yaml"
            )

    def _local_target(self) -> Target | None:
        lm = self.live.current.server.local_model
        if not lm.enabled:
            return None
        name = lm.endpoint or next((n for n, e in self.router.endpoints.items() if e.is_local), "")
        cfg = self.router.endpoints.get(name)
        if cfg is None:
            return None
        model = lm.model or (cfg.models[0] if cfg.models else "")
        return Target(name, cfg, model) if model else None
