"""A component's typed state reaches its module-level routers through one dependency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI

from rayfleet.appstate import attach, state_of


@dataclass
class ShopState:
    greeting: str


@dataclass
class OtherState:
    pass


State = Annotated[ShopState, Depends(state_of(ShopState))]
router = APIRouter()


@router.get("/hello")
async def hello(state: State) -> dict[str, str]:
    return {"said": state.greeting}


async def get(app: FastAPI, path: str) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        return await client.get(path)


async def test_routes_receive_the_attached_state():
    app = FastAPI()
    attach(app, ShopState("hi"))
    app.include_router(router)
    assert (await get(app, "/hello")).json() == {"said": "hi"}


async def test_state_of_the_wrong_type_is_refused_loudly():
    app = FastAPI()
    attach(app, OtherState())
    app.include_router(router)
    with pytest.raises(TypeError, match="OtherState, not ShopState"):
        await get(app, "/hello")
