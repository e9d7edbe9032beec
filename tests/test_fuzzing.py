"""The fuzzing helper itself: it must find a 5xx and an answer that breaks its own schema."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tests.fuzzing import fuzz_asgi


class Item(BaseModel):
    name: str


def test_fuzzing_finds_server_errors_and_schema_lies_and_passes_a_sound_route():
    app = FastAPI()

    @app.get("/crash/{number}")
    async def crash(number: int) -> dict[str, int]:
        return {"inverse": 1 // (number - number)}  # always ZeroDivisionError -> 500

    @app.get("/lie", response_model=Item)
    async def lie() -> JSONResponse:
        return JSONResponse({"nome": 1})  # bypasses validation: a 200 that breaks the documented schema

    @app.get("/sound/{number}", response_model=Item)
    async def sound(number: int) -> Item:
        return Item(name=str(number))

    report = fuzz_asgi(app, "/openapi.json", max_examples=5)
    assert set(report.failures) >= {"GET /crash/{number}", "GET /lie"}
    assert "Response violates schema" in report.failures["GET /lie"]
    assert "GET /sound/{number}" not in report.failures
