"""Virtual keys on the replica side: the local copy replicas authenticate against, and the guard.

The ``KeyBoard`` actor (``actors/llm_gateway/keys.py``) holds the records; each replica keeps
a copy by hash, which follows the actor with a long-poll (``follow.py``: the actor answers as soon
as a key changes; the replica that made a change also reads it at once), so a new or revoked key
holds on every replica within a second (one actor call) and inference requests never call the actor. A key is stored only as its SHA-256: it is 32 random bytes,
so a fast hash is as good as a slow one against guessing.

``guard(env_guard)`` accepts a virtual key before the environment keys: a revoked key gets
the same 401 as an unknown one, an expired key 401 ``key_expired``. The key's record rides
on ``request.state.virtual_key``; ``key_model`` applies the key's own ``aliases`` and
``allowed(record, requested, resolved)`` is the model check (on what the alias names),
``still_valid`` the check a running stream repeats (a key revoked, rotated or expired while its
stream runs ends that stream).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.requests import Request

from actors.llm_gateway.changes import newer
from actors.llm_gateway.keys import KeyBoard
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.follow import follow
from rayfleet.auth import fingerprint, presented_key
from rayfleet.state import ActorHandle, call

KEY_PREFIX = "sk-rf-"
Guard = Callable[[Request], Awaitable[str]]


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class KeyIn(BaseModel):
    """Body of ``POST /api/v1/keys``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    models: list[str] = Field(default_factory=list, max_length=256)
    aliases: dict[str, str] = Field(default_factory=dict, max_length=64)  # this key's model names → models
    expires_at: float | None = None
    team: str | None = Field(None, max_length=64)
    metadata: dict[str, str] = Field(default_factory=dict, max_length=32)
    rpm: int | None = Field(None, ge=1, le=1_000_000)  # requests per minute, cluster-wide
    tpm: int | None = Field(None, ge=1, le=1_000_000_000)  # tokens per minute, cluster-wide
    budget_daily: float | None = Field(None, gt=0, le=1_000_000, allow_inf_nan=False)  # USD per UTC day
    budget_total: float | None = Field(None, gt=0, le=100_000_000, allow_inf_nan=False)  # USD over the key's life

    @field_validator("name", "team")
    @classmethod
    def _printable(cls, v: str | None) -> str | None:
        if v is not None and any(ord(c) < 32 or ord(c) == 127 for c in v):
            raise ValueError("must not contain control characters")
        return v

    @field_validator("models")
    @classmethod
    def _models(cls, v: list[str]) -> list[str]:
        if any(not m or len(m) > 256 for m in v):
            raise ValueError("each model is a non-empty name of at most 256 characters")
        return v

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, v: dict[str, str]) -> dict[str, str]:
        if any(not a or not m or len(a) > 256 or len(m) > 256 for a, m in v.items()):
            raise ValueError("each alias and model is a non-empty name of at most 256 characters")
        return v

    @field_validator("expires_at")
    @classmethod
    def _future(cls, v: float | None) -> float | None:
        if v is not None and v <= time.time():
            raise ValueError("must be in the future (Unix seconds)")
        return v

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, str]) -> dict[str, str]:
        if any(len(k) > 64 or len(val) > 256 for k, val in v.items()):
            raise ValueError("keys of at most 64 and values of at most 256 characters")
        return v


class KeyUpdate(KeyIn):
    """Body of ``PATCH /api/v1/keys/{id}``: any of the fields of a new key."""

    name: str | None = Field(None, min_length=1, max_length=64)  # type: ignore[assignment]


def new_secret() -> tuple[str, dict[str, str]]:
    """A fresh secret and what the actor keeps of it: its hash and a display prefix, never the secret."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    return key, {"hash": hash_key(key), "prefix": key[: len(KEY_PREFIX) + 4]}


def new_key(fields: KeyIn) -> tuple[str, dict[str, Any]]:
    """A fresh secret and the record of a new key."""
    key, kept = new_secret()
    return key, {"id": "vk_" + secrets.token_hex(8), **kept, **fields.model_dump()}


def public(record: dict[str, Any]) -> dict[str, Any]:
    """What the API shows of a key: everything but its hash."""
    return {k: v for k, v in record.items() if k != "hash"}


def key_model(record: dict[str, Any] | None, requested: str) -> str:
    """The model a key's own alias names (its ``aliases``), else the name asked for."""
    if record is None:
        return requested
    aliases: dict[str, str] = record.get("aliases") or {}
    return aliases.get(requested, requested)


def allowed(record: dict[str, Any], requested: str, resolved: str) -> bool:
    """Whether the key may use the model asked for (by its own name or an alias of it)."""
    models = record.get("models") or []
    return not models or requested in models or resolved in models


class VirtualKeys:
    """This replica's copy of the keys, by hash."""

    def __init__(self, handle: ActorHandle[KeyBoard]) -> None:
        self.handle = handle
        self.version = -1
        self.records: dict[str, dict[str, Any]] = {}
        self._by_hash: dict[str, dict[str, Any]] = {}

    def apply(self, snapshot: dict[str, Any] | None) -> None:
        if snapshot is None or snapshot["version"] == self.version or not newer(snapshot["version"], self.version):
            return
        self.version = snapshot["version"]
        self.records = {k["id"]: k for k in snapshot["keys"]}
        self._by_hash = {k["hash"]: k for k in snapshot["keys"]}

    async def refresh(self) -> None:
        self.apply(await call(self.handle, KeyBoard.snapshot, self.version))

    async def run(self) -> None:
        """Follow the board's changes (a long-poll) until cancelled."""
        await follow(
            "virtual-keys",
            lambda: self.version,
            lambda known, hold: call(self.handle, KeyBoard.wait_snapshot, known, hold),
            self.apply,
            self.refresh,
        )

    def lookup(self, key: str) -> dict[str, Any] | None:
        return self._by_hash.get(hash_key(key)) if self._by_hash else None

    def still_valid(self, record: dict[str, Any], now: float) -> bool:
        """Whether the key a request came in with may still be used: not revoked, rotated or expired since.

        Read from this replica's copy, so a change made elsewhere holds here once the long-poll brings it."""
        current = self.records.get(record["id"])
        if current is None or current["revoked_at"] is not None or current["hash"] != record["hash"]:
            return False
        return current["expires_at"] is None or current["expires_at"] > now

    def guard(self, env_guard: Guard) -> Guard:
        """The inference guard: a virtual key first, else the environment keys (``env_guard``)."""

        async def guard(request: Request) -> str:
            key = presented_key(request, "x-api-key", bearer=True)
            record = self.lookup(key) if key else None
            if record is None or key is None:
                return await env_guard(request)
            if record["revoked_at"] is not None:
                raise GatewayError(401, "Invalid API key", code="invalid_api_key", error_class="invalid")
            if record["expires_at"] is not None and record["expires_at"] <= time.time():
                raise GatewayError(401, "This key has expired", code="key_expired", error_class="expired")
            request.state.virtual_key = record
            return fingerprint(key)

        return guard
