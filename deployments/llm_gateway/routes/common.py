"""What every resource router shares: the replica's state as a dependency."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from deployments.llm_gateway.state import GatewayState
from rayfleet.appstate import state_of

Gateway = Annotated[GatewayState, Depends(state_of(GatewayState))]
