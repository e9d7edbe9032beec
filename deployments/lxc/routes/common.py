"""What every resource router shares: the service dependency, path/query parameters, small checks."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, TypeVar

from fastapi import Body, Depends, Path, Query

from rayfleet.appstate import state_of

from .. import validate as v
from ..errors import BadRequest
from ..hosts import Target
from ..models import Located
from ..service import LxcService
from ..state import LxcState

Ctx = Annotated[LxcState, Depends(state_of(LxcState))]


def _service(state: Ctx) -> LxcService:
    return state.service


Svc = Annotated[LxcService, Depends(_service)]
InstanceId = Annotated[int, Path(description="container id (digits only; Proxmox range 100-999999999)")]
Region = Annotated[str | None, Query(description="configured region (default: the first)", max_length=64)]
Az = Annotated[str | None, Query(description="availability zone in the region (default: the first)", max_length=64)]
Flag = Annotated[str | None, Query(description="`true` adds the flag, `false` or absence leaves it out")]

# The `{instance_id}` segment only matches digits, so `/lxc/instances/start` never reaches a
# per-instance route and 405 answers list the right methods.
INSTANCE = "/lxc/instances/{instance_id:int}"

T = TypeVar("T")

body_opt: Any = Body(default=None)


def need(value: T | None, field: str) -> T:
    """A required body field: 400 {"error"} when missing or blank."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise BadRequest(f"'{field}' is required")
    return value


OFFLOAD_CHARS = 2_048


async def command_words(value: Any, field: str = "command") -> list[str]:
    """A required exec-style command, checked and split (a long one on a worker thread, off the event loop)."""
    need(value, field)
    size = len(value) if isinstance(value, str) else sum(len(w) for w in value if isinstance(w, str))
    if isinstance(value, list):
        size += len(value)
    if size <= OFFLOAD_CHARS:
        return v.exec_words(value, field)
    return await asyncio.to_thread(v.exec_words, value, field)


def located(svc: LxcService, body: Located | None) -> Target:
    """The host a body's optional region/az select."""
    return svc.target(body.region, body.az) if body is not None else svc.target()
