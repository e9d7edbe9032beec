"""Client for an OpenAI-compatible `/v1/embeddings` endpoint, plus vector packing.

Uses only `http.client` (fast to import). The whole request, connect to last
byte, is bounded by `MEM_EMBED_TIMEOUT`: it runs on a daemon thread that the
caller stops waiting for at the deadline, so a server that trickles bytes
cannot hold the CLI longer than the timeout.
"""

from __future__ import annotations

import json
import math
import sys
import threading
from array import array
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from deployments.memory.errors import EmbeddingError

if TYPE_CHECKING:
    from deployments.memory.config import Settings


def endpoint_url(base: str) -> str:
    """Accept a base URL (`http://h:p`, `http://h:p/v1`) or the full `/v1/embeddings` URL."""
    url = base.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EmbeddingError(f"MEM_EMBEDDING_URL must be an http(s) URL, got {base!r}")
    if parts.path.endswith("/embeddings"):
        return url
    if parts.path.endswith("/v1"):
        return url + "/embeddings"
    return url + "/v1/embeddings"


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _post(url: str, body: bytes, timeout: float, api_key: str = "") -> tuple[int, bytes]:
    import http.client

    parts = urlsplit(url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.hostname or "", parts.port, timeout=timeout)
    headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "mem"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


class EmbeddingClient:
    """OpenAI's embeddings request (`model`, `input`, `encoding_format: float`), with
    `MEM_EMBEDDING_API_KEY` as a bearer token when set. The key only travels over https,
    or over http to this machine's loopback (a local server or test double)."""

    def __init__(self, base_url: str, model: str, timeout: float, api_key: str = "") -> None:
        self.url = endpoint_url(base_url)
        self.model = model
        self.timeout = timeout
        self._api_key = api_key
        parts = urlsplit(self.url)
        if api_key and parts.scheme != "https" and parts.hostname not in LOOPBACK:
            raise EmbeddingError(
                f"refusing to send MEM_EMBEDDING_API_KEY over plain http to {parts.hostname}; use an https URL"
            )

    @property
    def model_id(self) -> str:
        """What is stored beside each vector: vectors of another model are never compared."""
        return self.model or f"default@{urlsplit(self.url).netloc}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        payload: dict[str, object] = {"input": texts, "encoding_format": "float"}
        if self.model:
            payload["model"] = self.model
        body = json.dumps(payload).encode()
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                outcome["result"] = _post(self.url, body, self.timeout, self._api_key)
            except BaseException as exc:  # reported to the waiting caller
                outcome["error"] = exc

        worker = threading.Thread(target=run, name="mem-embed", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            raise EmbeddingError(f"embedding endpoint timed out after {self.timeout:g}s")
        if "error" in outcome:
            exc = outcome["error"]
            if isinstance(exc, TimeoutError):  # the socket's own timeout can end the call just before the join's
                raise EmbeddingError(f"embedding endpoint timed out after {self.timeout:g}s")
            raise EmbeddingError(f"embedding endpoint unreachable: {type(exc).__name__}: {exc}")
        status, raw = cast(tuple[int, bytes], outcome["result"])
        if status in (401, 403):
            which = "rejected the API key" if self._api_key else "needs an API key (set MEM_EMBEDDING_API_KEY)"
            raise EmbeddingError(f"embedding endpoint {which} (HTTP {status})")
        if status != 200:
            raise EmbeddingError(f"embedding endpoint answered HTTP {status}{_reason(raw)}")
        return _parse(raw, len(texts))


def _reason(raw: bytes) -> str:
    """OpenAI's `error.code` or `error.type` (never its message, which may quote the key)."""
    try:
        error = json.loads(raw)["error"]
        label = error.get("code") or error.get("type")
    except (ValueError, KeyError, TypeError, AttributeError):
        return ""
    return f" ({str(label)[:60]})" if label else ""


def _parse(raw: bytes, expected: int) -> list[list[float]]:
    try:
        doc = json.loads(raw)
        items = sorted(doc["data"], key=lambda d: d.get("index", 0))
        vectors = [[float(x) for x in item["embedding"]] for item in items]
    except (ValueError, KeyError, TypeError) as exc:
        raise EmbeddingError(f"embedding endpoint sent an invalid response: {exc}") from None
    if len(vectors) != expected or any(not v for v in vectors):
        raise EmbeddingError("embedding endpoint returned the wrong number of vectors")
    if len({len(v) for v in vectors}) != 1:
        raise EmbeddingError("embedding endpoint returned vectors of different dimensions")
    return vectors


def pack(vector: list[float]) -> bytes:
    """Unit-normalise and pack as little-endian float32 (so cosine is a dot product)."""
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    arr = array("f", (x / norm for x in vector))
    if sys.byteorder == "big":
        arr.byteswap()
    return arr.tobytes()


def unpack(blob: bytes) -> list[float]:
    arr = array("f")
    arr.frombytes(blob)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr.tolist()


def dot(a: bytes, b: bytes) -> float:
    """Cosine of two packed unit vectors; 0.0 when their dimensions differ."""
    if len(a) != len(b):
        return 0.0
    return sum(x * y for x, y in zip(unpack(a), unpack(b), strict=False))


def client_for(settings: Settings) -> EmbeddingClient | None:
    """The configured client, or None when hybrid retrieval is off."""
    if not settings.embeddings_enabled:
        return None
    return EmbeddingClient(
        settings.embedding_url, settings.embedding_model, settings.embed_timeout, settings.embedding_api_key
    )
