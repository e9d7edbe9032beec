"""Replica side of the endpoint registry: input validation, the routing snapshot, probes.

The entries themselves live in the ``RegistryBoard`` actor (``actors/llm_gateway``),
which writes them through to the gateway's store. Each replica follows the board's
versioned snapshot with a long-poll (``follow.py``: a change arrives in one call; after a failed
call the snapshot is read afresh every ``registry.refresh_interval`` until the long-poll answers
again) and hands the ``verified`` entries to the router as endpoints, so inference requests
never wait on the actor.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, get_args
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from actors.llm_gateway.breaker import BreakerView
from actors.llm_gateway.changes import newer
from actors.llm_gateway.registry import VERIFIED, RegistryBoard
from deployments.llm_gateway.config import CONFIG_ONLY_PROVIDERS, EndpointConfig, Provider
from deployments.llm_gateway.follow import follow
from deployments.llm_gateway.providers import adapter_for
from deployments.llm_gateway.routing import Router
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, call

log = get_logger("llm_gateway")

PROVIDERS: tuple[str, ...] = tuple(p for p in get_args(Provider) if p not in CONFIG_ONLY_PROVIDERS)
PRIORITY_LIMIT = 1000
_ID_CHARS = re.compile(r"[^a-z0-9._-]+")


def entry_id(name: str) -> str:
    """The path id of an entry: its name lower-cased, other characters folded to ``-``."""
    return _ID_CHARS.sub("-", name.strip().lower()).strip("-.")[:64]


def _models(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        seen: list[str] = []
        for v in (v.strip() for v in value):
            if v and v not in seen:
                seen.append(v)
        return seen
    return value


class EntryIn(BaseModel):
    """Body of ``POST /api/v1/registry`` (spec 001 §A.1)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    base_url: str = Field(max_length=2048)
    provider: str
    priority: StrictInt = Field(ge=-PRIORITY_LIMIT, le=PRIORITY_LIMIT)
    api_key: str | None = Field(None, max_length=4096)
    models: list[str] = []

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = v.strip()
        if not v or not entry_id(v):
            raise ValueError("name must contain at least one letter or digit")
        if any(ord(c) < 32 for c in v):
            raise ValueError("name must not contain control characters")
        return v

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        v = v.strip(" ")
        if any(ord(c) <= 32 or ord(c) == 127 for c in v):  # CR/LF would split the request line of every probe
            raise ValueError("base_url must not contain whitespace or control characters")
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be an http:// or https:// URL with a host")
        if parts.username or parts.password:
            raise ValueError("base_url must not carry credentials; use api_key")
        if parts.query or parts.fragment:
            raise ValueError("base_url must not have a query or fragment")
        try:
            _ = parts.port
        except ValueError:
            raise ValueError("base_url has an invalid port") from None
        return v.rstrip("/")

    @field_validator("provider")
    @classmethod
    def _provider(cls, v: str) -> str:
        if v not in PROVIDERS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}")
        return v

    @field_validator("api_key")
    @classmethod
    def _key(cls, v: str | None) -> str | None:
        return v.strip() or None if v is not None else None

    @field_validator("models", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        return _models(v)


class PriorityIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    priority: StrictInt = Field(ge=-PRIORITY_LIMIT, le=PRIORITY_LIMIT)


def routing_models(entry: dict[str, Any]) -> list[str]:
    """The operator's list; else what the last probe found; else any model (empty list)."""
    return list(entry["models"] or entry.get("probed_models") or [])


def public_view(entry: dict[str, Any], breaker: BreakerView | None) -> dict[str, Any]:
    """An entry as the API shows it: never the API key, only whether one is set."""
    has_key = bool(entry.get("api_key")) or bool(entry.get("api_key_error"))
    return {
        "id": entry["id"],
        "name": entry["name"],
        "base_url": entry["base_url"],
        "provider": entry["provider"],
        "priority": entry["priority"],
        "models": entry["models"],
        "api_key_set": has_key,
        "api_key": "********" if has_key else None,
        "api_key_error": entry.get("api_key_error"),
        "status": entry["status"],
        "routable": entry["status"] == VERIFIED,
        "circuit_state": breaker["state"] if breaker else "CLOSED",
        "failure_count": breaker["failures"] if breaker else 0,
        "health": breaker.get("health", "unknown") if breaker else "unknown",
        "read_only": False,
        "source": "registry",
        "latency_ms": entry["latency_ms"],
        "probed_models": entry.get("probed_models"),
        "last_probe_at": entry["last_probe_at"],
        "last_error": entry["last_error"],
        "created_at": entry["created_at"],
        "updated_at": entry["updated_at"],
    }


def configured_view(name: str, ep: EndpointConfig, keys: int, breaker: BreakerView | None) -> dict[str, Any]:
    """An endpoint of the config file (or found at startup) as the registry lists it: read-only."""
    return {
        "id": name,
        "name": name,
        "base_url": ep.base_url,
        "provider": ep.provider,
        "priority": ep.priority,
        "models": list(ep.models),
        "api_key_set": keys > 0,
        "api_key": "********" if keys else None,
        "status": VERIFIED,
        "routable": True,
        "circuit_state": breaker["state"] if breaker else "CLOSED",
        "failure_count": breaker["failures"] if breaker else 0,
        "health": breaker.get("health", "unknown") if breaker else "unknown",
        "read_only": True,
        "source": "config",
    }


class RegistryClient:
    """Keeps this replica's router in step with the registry actor."""

    def __init__(self, handle: ActorHandle[RegistryBoard], router: Router, refresh_interval: float = 1.0) -> None:
        self.handle = handle
        self.router = router
        self.refresh_interval = refresh_interval
        self.version = -1
        self.entries: dict[str, dict[str, Any]] = {}

    def apply(self, snapshot: dict[str, Any] | None) -> None:
        if snapshot is None or snapshot["version"] == self.version or not newer(snapshot["version"], self.version):
            return
        self.version = snapshot["version"]
        self.entries = {e["id"]: e for e in snapshot["entries"]}
        live: dict[str, tuple[EndpointConfig, list[str]]] = {}
        for e in self.entries.values():
            if e["status"] != VERIFIED:
                continue
            cfg = EndpointConfig(
                provider=e["provider"], base_url=e["base_url"], models=routing_models(e), priority=e["priority"]
            )
            live[e["id"]] = (cfg, [e["api_key"]] if e.get("api_key") else [])
        self.router.set_dynamic(live)

    async def refresh(self, force: bool = False) -> None:
        self.apply(await call(self.handle, RegistryBoard.snapshot, -1 if force else self.version))

    async def run(self) -> None:
        """Follow the board's changes (a long-poll) until cancelled."""
        await follow(
            "registry",
            lambda: self.version,
            lambda known, hold: call(self.handle, RegistryBoard.wait_snapshot, known, hold),
            self.apply,
            self.refresh,
            retry=self.refresh_interval,
        )


class ProbeFailed(Exception):
    """The model listing did not answer usefully; the message never contains the key."""


def models_of(data: Any) -> list[str]:
    """Model ids of an OpenAI-style ``{data: [{id}]}``, Ollama-style ``{models: [{name}]}`` or Gemini-style
    ``{models: [{name: "models/<id>"}]}`` listing."""
    if not isinstance(data, dict):
        return []
    items = data.get("data") if isinstance(data.get("data"), list) else data.get("models") or []
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            name = item.get("id") or item.get("name") or item.get("model")
            if isinstance(name, str) and name:
                out.append(name.removeprefix("models/"))
    return out


async def probe(
    client: httpx.AsyncClient, provider: str, base_url: str, api_key: str | None, timeout: float
) -> tuple[float, list[str]]:
    """``GET {base_url}/models`` with the entry's key: (latency in ms, models listed)."""
    adapter = adapter_for(provider)
    started = time.perf_counter()
    try:
        resp = await client.get(adapter.models_url(base_url), headers=adapter.auth_headers(api_key), timeout=timeout)
        body = await resp.aread()
    except httpx.TimeoutException:
        raise ProbeFailed(f"no answer within {timeout:g} s") from None
    except httpx.InvalidURL:
        raise ProbeFailed(
            "the base URL is not a usable URL (it holds characters a request line cannot carry)"
        ) from None
    except httpx.HTTPError as exc:
        raise ProbeFailed(f"connection failed ({type(exc).__name__})") from None
    latency_ms = round((time.perf_counter() - started) * 1000, 2)
    if resp.status_code != 200:
        raise ProbeFailed(f"the model listing answered HTTP {resp.status_code}")
    try:
        data = json.loads(body)
    except ValueError:
        raise ProbeFailed("the model listing is not JSON") from None
    return latency_ms, models_of(data)
