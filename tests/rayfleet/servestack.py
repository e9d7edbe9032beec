"""The two ways an answer leaves a replica, as ASGI apps (for counting ``X-Request-ID`` headers).

- ``direct(app)``: what a replica serves, and what its direct port serves as is
  (`rayfleet.serving` gives every app one request-id middleware);
- ``through_proxy(app)``: the same behind Serve's HTTP proxy stack, built by Ray's own
  code (its request-id middleware, then the proxy callback serve.yaml installs).
"""

from __future__ import annotations

from typing import Any

import httpx

from rayfleet.serving import proxy_middlewares, with_request_ids


def direct(app: Any) -> Any:
    return with_request_ids(app)


def through_proxy(app: Any, callback: bool = True) -> Any:
    from ray.serve._private.http_util import _apply_middlewares

    return _apply_middlewares(with_request_ids(app), proxy_middlewares() if callback else [])


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://test")


def request_ids(response: httpx.Response) -> list[str]:
    return response.headers.get_list("x-request-id")
