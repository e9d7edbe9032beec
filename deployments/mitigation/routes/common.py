"""What the mitigation routers share: the component state, the node id of the mount, error tables."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from deployments.mitigation import schemas
from deployments.mitigation.state import MitigationState
from rayfleet.appstate import state_of

State = Annotated[MitigationState, Depends(state_of(MitigationState))]

KEY_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": schemas.ErrorBody, "description": "no X-Service-API-Key"},
    403: {"model": schemas.ErrorBody, "description": "wrong X-Service-API-Key"},
}


def _node_id(request: Request) -> str:
    """The `{node_id}` of the `/nodes/{node_id}` mount the node API is served under."""
    return str(request.scope.get("path_params", {}).get("node_id", ""))


NodeId = Annotated[str, Depends(_node_id)]
