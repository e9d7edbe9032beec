"""What the generator's routers share: the state dependency and the documented errors."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends

from deployments.ignore_gen.models import ErrorResponse
from deployments.ignore_gen.state import IgnoreGenState
from rayfleet.appstate import state_of

Ctx = Annotated[IgnoreGenState, Depends(state_of(IgnoreGenState))]

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "both `tree` and `features` missing"},
    404: {"model": ErrorResponse, "description": "unknown feature with no template"},
    413: {"model": ErrorResponse, "description": "a configured limit exceeded"},
    422: {"model": ErrorResponse, "description": "validation error"},
}
