"""A hosted-embeddings double: OpenAI's `POST /v1/embeddings` over a real socket, as strict as
the real API about what `mem` sends.

It checks, and answers the way OpenAI does when a check fails:
- `Authorization: Bearer <key>` equal to the key it was started with: else 401
  `invalid_api_key` (no header: "You didn't provide an API key");
- `Content-Type: application/json` and a JSON object body: else 400;
- `model`: a string naming a model it serves: else 400 (missing) or 404 `model_not_found`;
- `input`: a non-empty string or a list of 1..2048 non-empty strings: else 400;
- `encoding_format` (`float` or `base64`), `dimensions` (positive int) and `user` (str) are
  the only other fields: else 400 `Unrecognized request argument supplied`;
- only `POST /v1/embeddings`: else 404.
The answer is OpenAI's shape: `{"object": "list", "data": [{"object": "embedding", "index",
"embedding"}], "model", "usage": {"prompt_tokens", "total_tokens"}}`, deterministic vectors
(hashed word and trigram features) so similar texts get close vectors.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.deployments.memory.embedserver import hashed_vector

MODELS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
ALLOWED = {"model", "input", "encoding_format", "dimensions", "user"}


def _error(message: str, kind: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class HostedEmbeddings:
    """`with HostedEmbeddings(key) as double: double.url` → `http://127.0.0.1:<port>/v1`."""

    def __init__(self, api_key: str, dim: int = 64) -> None:
        self.api_key = api_key
        self.dim = dim
        self.requests: list[dict[str, Any]] = []  # what was accepted or refused, for assertions
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:
                self._send(404, _error("Invalid URL (GET /v1/embeddings)", "invalid_request_error", None))

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                status, payload = double.answer(self.path, dict(self.headers.items()), raw)
                self._send(status, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> HostedEmbeddings:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, Any]]:
        lower = {k.lower(): v for k, v in headers.items()}
        auth = lower.get("authorization", "")
        self.requests.append({"path": path, "authorization": auth, "body": raw})
        if path != "/v1/embeddings":
            return 404, _error(f"Invalid URL (POST {path})", "invalid_request_error", None)
        if not auth:
            return 401, _error("You didn't provide an API key.", "invalid_request_error", None)
        if auth != f"Bearer {self.api_key}":
            return 401, _error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        if not lower.get("content-type", "").startswith("application/json"):
            return 400, _error("Content-Type must be application/json", "invalid_request_error", None)
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, _error("We could not parse the JSON body of your request.", "invalid_request_error", None)
        return self._embed(body)

    def _embed(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict):
            return 400, _error("The body must be a JSON object.", "invalid_request_error", None)
        extra = sorted(set(body) - ALLOWED)
        if extra:
            return 400, _error(f"Unrecognized request argument supplied: {extra[0]}", "invalid_request_error", None)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return 400, _error("you must provide a model parameter", "invalid_request_error", None, "model")
        if model not in MODELS:
            return 404, _error(f"The model `{model}` does not exist", "invalid_request_error", "model_not_found")
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not 1 <= len(inputs) <= 2048:
            return 400, _error(
                "'input' must be a string or an array of 1 to 2048 strings", "invalid_request_error", None, "input"
            )
        if any(not isinstance(t, str) or not t for t in inputs):
            return 400, _error("'input' items must be non-empty strings", "invalid_request_error", None, "input")
        if body.get("encoding_format", "float") not in ("float", "base64"):
            return 400, _error("encoding_format must be float or base64", "invalid_request_error", None)
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_vector(t, self.dim)} for i, t in enumerate(inputs)
        ]
        tokens = sum(max(1, len(t) // 4) for t in inputs)
        return 200, {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
