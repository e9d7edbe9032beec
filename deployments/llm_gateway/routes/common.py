"""What every resource router shares: the replica's state as a dependency."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

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
