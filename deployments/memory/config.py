"""Settings of the `mem` tool, read from `MEM_*` environment variables.

Kept free of heavy imports: this module is loaded on every `mem` invocation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import NamedTuple

from deployments.memory.errors import UsageError

DEFAULT_DB = "~/.long-term-memory/memories.db"
DEFAULT_SCOPE = "user"
DEFAULT_EMBED_TIMEOUT = "5s"
HOSTED_URL = "https://api.openai.com/v1"  # MEM_EMBEDDING_API_KEY without MEM_EMBEDDING_URL
HOSTED_MODEL = "text-embedding-3-small"
DEFAULT_SERVE_PORT = 8080
DEFAULT_RRF_K = 60.0

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")


def parse_duration(text: str) -> float:
    """Parse a duration such as `5s`, `1.5s`, `500ms`, `1m30s` or a bare number of seconds."""
    raw = text.strip()
    if not raw:
        raise UsageError("empty duration")
    try:
        value = float(raw)
    except ValueError:
        value = None
    if value is not None:
        if value <= 0:
            raise UsageError(f"duration must be positive: {text!r}")
        return value
    pos = 0
    total = 0.0
    factors = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    while pos < len(raw):
        match = _DURATION_PART.match(raw, pos)
        if not match:
            raise UsageError(f"invalid duration {text!r} (examples: 5s, 500ms, 1m30s)")
        total += float(match.group(1)) * factors[match.group(2)]
        pos = match.end()
    if total <= 0:
        raise UsageError(f"duration must be positive: {text!r}")
    return total


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise UsageError(f"{name} must be a number, got {raw!r}") from None


class Settings(NamedTuple):
    """Every knob of the tool; see README.md for the table of variables.

    A NamedTuple rather than a dataclass: `dataclasses` costs milliseconds of
    start-up on every `mem` invocation.
    """

    db_path: str
    scope: str = DEFAULT_SCOPE
    debug: bool = False
    log_file: str = ""
    embedding_url: str = ""
    embedding_model: str = ""
    embed_disable: bool = False
    embed_timeout: float = 5.0
    conflict_disable: bool = False
    serve_token: str = ""
    serve_port: int = DEFAULT_SERVE_PORT
    rrf_k: float = DEFAULT_RRF_K
    rrf_text_weight: float = 1.0
    rrf_vector_weight: float = 1.0
    vector_min_similarity: float = 0.25
    embedding_api_key: str = ""  # MEM_EMBEDDING_API_KEY, sent as a bearer token; never shown

    def __repr__(self) -> str:  # never show the token or the API key
        return f"Settings(db_path={self.db_path!r}, scope={self.scope!r}, embedding_url={self.embedding_url!r})"

    @property
    def db_dir(self) -> str:
        return os.path.dirname(self.db_path)

    @property
    def embeddings_enabled(self) -> bool:
        return bool(self.embedding_url) and not self.embed_disable


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Build settings from the environment (default: `os.environ`)."""
    env = os.environ if env is None else env
    db = env.get("MEM_DB", "").strip() or DEFAULT_DB
    db_path = os.path.abspath(os.path.expanduser(db))
    log_file = env.get("MEM_LOG_FILE", "").strip()
    port_raw = env.get("MEM_SERVE_PORT", "").strip()
    try:
        port = int(port_raw) if port_raw else DEFAULT_SERVE_PORT
    except ValueError:
        raise UsageError(f"MEM_SERVE_PORT must be an integer, got {port_raw!r}") from None
    if not 1 <= port <= 65535:
        raise UsageError(f"MEM_SERVE_PORT out of range: {port}")
    api_key = env.get("MEM_EMBEDDING_API_KEY", "").strip()
    url = env.get("MEM_EMBEDDING_URL", "").strip()
    model = env.get("MEM_EMBEDDING_MODEL", "").strip()
    if api_key and not url:  # a key alone means OpenAI's hosted endpoint
        url, model = HOSTED_URL, model or HOSTED_MODEL
    rrf_k = _float(env, "MEM_RRF_K", DEFAULT_RRF_K)
    if rrf_k < 0:
        raise UsageError("MEM_RRF_K must be >= 0")
    return Settings(
        db_path=db_path,
        scope=env.get("MEM_SCOPE", "").strip() or DEFAULT_SCOPE,
        debug=_flag(env, "MEM_DEBUG") or bool(log_file),
        log_file=log_file,
        embedding_url=url,
        embedding_model=model,
        embedding_api_key=api_key,
        embed_disable=_flag(env, "MEM_EMBED_DISABLE"),
        embed_timeout=parse_duration(env.get("MEM_EMBED_TIMEOUT", "").strip() or DEFAULT_EMBED_TIMEOUT),
        conflict_disable=_flag(env, "MEM_CONFLICT_DISABLE"),
        serve_token=env.get("MEM_SERVE_TOKEN", "").strip(),
        serve_port=port,
        rrf_k=rrf_k,
        rrf_text_weight=_float(env, "MEM_RRF_TEXT_WEIGHT", 1.0),
        rrf_vector_weight=_float(env, "MEM_RRF_VECTOR_WEIGHT", 1.0),
        vector_min_similarity=_float(env, "MEM_VECTOR_MIN_SIM", 0.25),
    )
