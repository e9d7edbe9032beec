"""The one API-key guard: constant-time match over several keys, 401/403, logs without the key."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

from rayfleet.auth import AuthResult, api_key_guard, fingerprint, match_key

KEYS = ["k-first-0123456789abcdef0123456789", "k-second-0123456789abcdef012345678"]


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message


def build(bearer: bool = False, keys=KEYS) -> FastAPI:
    app = FastAPI()

    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        return JSONResponse({"error": exc.message, "code": exc.status}, status_code=exc.status)

    guard = api_key_guard(keys, on_failure=lambda _r, s, m: Refused(s, m), component="test", bearer=bearer)

    @app.get("/who")
    async def who(result: AuthResult = Depends(guard)) -> dict:
        return {"index": result.index, "fingerprint": result.fingerprint}

    return app


async def get(app: FastAPI, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://t") as client:
        return await client.get("/who", headers=headers)


async def test_each_configured_key_is_accepted_and_named_by_its_index():
    app = build()
    for index, key in enumerate(KEYS):
        response = await get(app, {"X-API-Key": key})
        assert response.status_code == 200
        assert response.json() == {"index": index, "fingerprint": fingerprint(key)}


async def test_missing_key_is_401_and_wrong_key_is_403_in_the_components_shape():
    app = build()
    missing = await get(app, {})
    wrong = await get(app, {"X-API-Key": "nope"})
    assert (missing.status_code, missing.json()["error"]) == (401, "missing API key")
    assert (wrong.status_code, wrong.json()["error"]) == (403, "invalid API key")


async def test_bearer_tokens_only_when_allowed():
    header = {"Authorization": f"Bearer {KEYS[1]}"}
    assert (await get(build(bearer=False), header)).status_code == 401
    assert (await get(build(bearer=True), header)).json()["index"] == 1


async def test_no_configured_key_refuses_even_an_empty_one():
    app = build(keys=[])
    assert (await get(app, {"X-API-Key": ""})).status_code == 401
    assert (await get(app, {"X-API-Key": "anything"})).status_code == 403


async def test_keys_can_be_a_callable_so_rotation_needs_no_rebuild():
    current = [KEYS[0]]
    app = build(keys=lambda: current)
    assert (await get(app, {"X-API-Key": KEYS[1]})).status_code == 403
    current[:] = [KEYS[1]]
    assert (await get(app, {"X-API-Key": KEYS[1]})).status_code == 200


async def test_failures_are_logged_with_the_client_address_and_never_the_key(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.WARNING)
    await get(build(), {"X-API-Key": "secret-attempt-value"})
    records = [r for r in caplog.records if r.getMessage() == "authentication failed"]
    assert records and records[0].__dict__["client_ip"] == "127.0.0.1"
    assert all("secret-attempt-value" not in repr(r.__dict__) for r in caplog.records)


def test_match_key_compares_every_key_and_returns_the_first_match():
    assert match_key(KEYS[1], KEYS) == 1
    assert match_key("x", KEYS) is None
    assert match_key(None, KEYS) is None


def test_an_httpexception_factory_works_too():
    guard = api_key_guard(KEYS, on_failure=lambda _r, s, m: HTTPException(s, m), component="test")
    assert callable(guard)
