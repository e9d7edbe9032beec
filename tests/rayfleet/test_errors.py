"""The one error-handler installer: every error leaves in the component's shape."""

from __future__ import annotations

from collections.abc import Mapping

import httpx
import pytest
from fastapi import FastAPI, Request
from pydantic import BaseModel
from starlette.responses import JSONResponse, Response

from rayfleet.errors import install_error_handlers
from rayfleet.http import RequestIdMiddleware


class Refused(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Item(BaseModel):
    n: int


def shape(request: Request, status: int, message: str, headers: Mapping[str, str] | None) -> Response:
    return JSONResponse({"oops": message, "status": status}, status_code=status, headers=dict(headers or {}))


def make_app(**kw) -> FastAPI:
    app = FastAPI()
    app.add_middleware(RequestIdMiddleware)
    install_error_handlers(app, shape, component="demo", **kw)

    @app.post("/items")
    async def create(item: Item) -> dict[str, int]:
        return {"n": item.n}

    @app.get("/refused")
    async def refused() -> None:
        raise Refused("no thanks")

    @app.get("/crash")
    async def crash() -> None:
        raise RuntimeError("secret-detail-123")

    return app


async def request(app: FastAPI, method: str, path: str, **kw) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return await client.request(method, path, **kw)


async def test_http_errors_keep_their_status_detail_and_headers():
    app = make_app()
    missing = await request(app, "GET", "/nowhere")
    assert missing.status_code == 404 and missing.json() == {"oops": "Not Found", "status": 404}
    wrong_method = await request(app, "DELETE", "/items")
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"


async def test_validation_is_400_with_a_readable_message_by_default():
    answer = await request(make_app(), "POST", "/items", json={"n": "x"})
    assert answer.status_code == 400
    assert answer.json()["oops"].startswith("invalid request: n: ")


async def test_component_exceptions_and_overrides_use_their_renderers():
    app = make_app(
        handlers={Refused: lambda request, exc: shape(request, 409, exc.why, None)},
        validation=lambda request, exc: shape(request, 422, "bad body", None),
    )
    refused = await request(app, "GET", "/refused")
    assert refused.status_code == 409 and refused.json()["oops"] == "no thanks"
    invalid = await request(app, "POST", "/items", json={})
    assert invalid.status_code == 422 and invalid.json()["oops"] == "bad body"


async def test_an_unexpected_exception_is_500_without_its_text(caplog: pytest.LogCaptureFixture):
    answer = await request(make_app(internal_message="something broke"), "GET", "/crash")
    assert answer.status_code == 500
    assert answer.json() == {"oops": "something broke", "status": 500}
    assert "secret-detail-123" not in answer.text
