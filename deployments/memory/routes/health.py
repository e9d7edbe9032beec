"""Health: open (no token), for `mem doctor` and the clipper."""

from __future__ import annotations

from fastapi import APIRouter

from deployments.memory.routes.common import Ctx

router = APIRouter()


@router.get("/health")
def health(state: Ctx) -> dict[str, str]:
    return {"status": "ok", "version": state.version}
