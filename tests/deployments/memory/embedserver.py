"""A real HTTP server speaking the OpenAI `/v1/embeddings` wire format, for tests and the bench.

Vectors are deterministic: hashed word unigrams and character trigrams, so texts
that share words and spellings get close vectors. Modes: `ok`, `stall` (answers
after `stall_seconds`), `gate` (answers once `gate` is set, or after `stall_seconds`), `error` (HTTP 500 with an OpenAI-style error body).
"""

from __future__ import annotations

import json
import math
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = 256


def hashed_vector(text: str, dim: int = DIM) -> list[float]:
    vec = [0.0] * dim
    words = "".join(c.lower() if c.isalnum() else " " for c in text).split()
    for word in words:
        vec[zlib.crc32(b"w:" + word.encode()) % dim] += 2.0
        padded = f"#{word}#"
        for i in range(len(padded) - 2):
            vec[zlib.crc32(b"t:" + padded[i : i + 3].encode()) % dim] += 1.0
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


class EmbeddingServer:
    def __init__(self, mode: str = "ok", stall_seconds: float = 3.0, dim: int = DIM) -> None:
        self.mode = mode
        self.stall_seconds = stall_seconds
        self.dim = dim
        self.requests: list[dict] = []
        self.gate = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "body": body})
                if server.mode == "stall":
                    time.sleep(server.stall_seconds)  # the behaviour: a server that stalls (timeout tests)
                if server.mode == "gate":
                    server.gate.wait(server.stall_seconds)  # answers once the test opens the gate
                if server.mode == "error":
                    payload = json.dumps({"error": {"message": "model overloaded", "type": "server_error"}})
                    self._send(500, payload.encode())
                    return
                if self.path != "/v1/embeddings":
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                inputs = body.get("input")
                inputs = [inputs] if isinstance(inputs, str) else inputs
                data = [
                    {"object": "embedding", "index": i, "embedding": hashed_vector(t, server.dim)}
                    for i, t in enumerate(inputs)
                ]
                payload = {
                    "object": "list",
                    "data": data,
                    "model": body.get("model", "hashed-ngrams"),
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                }
                self._send(200, json.dumps(payload).encode())

            def _send(self, status: int, raw: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> EmbeddingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
