"""What every resource router shares: the replica's state as a dependency."""

from __future__ import annotations

from typing import Annotated, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel, ValidationError

from deployments.llm_gateway.body import read_capped
from deployments.llm_gateway.errors import GatewayError, json_object
from deployments.llm_gateway.state import GatewayState
from rayfleet.appstate import state_of

Gateway = Annotated[GatewayState, Depends(state_of(GatewayState))]


def gateway_of(request: Request) -> GatewayState:
    """The replica's state read straight off the app, for the inference hot path.

    ``state_of`` is a plain function, which FastAPI runs in its thread pool on every
    request; the inference routes skip that hop (``create_app`` attached the state).
    """
    state: GatewayState = request.app.state.component
    return state


M = TypeVar("M", bound=BaseModel)
MAX_BODY = 64 * 1024


async def parsed_body(request: Request, model: type[M]) -> M:
    """Parse the JSON body after authentication, so a bad key is refused before bad input is."""
    data = json_object(await read_capped(request, MAX_BODY))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "body"
        raise GatewayError(422, f"{where}: {first.get('msg', 'invalid value')}", code="validation_error") from None
