"""Template images: create from a container, delete from the cache, upload."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from .. import jobs
from .. import validate as v
from ..models import ImageBody, UploadBody
from ..responses import JOB_ACCEPTED, Output, Result
from ..service import HostResult
from .common import Az, Ctx, Region, Svc, body_opt, located, need

router = APIRouter(tags=["templates"])


@router.post("/px/image", response_model=Output, responses=JOB_ACCEPTED)
async def px_image(svc: Svc, state: Ctx, request: Request, body: ImageBody | None = body_opt) -> Any:
    """vzdump of the (stopped) container, stored in the template cache as `<template_name>.tar.gz`;
    with `Prefer: respond-async`: 202 and a job."""
    body = body or ImageBody()
    vmid = v.vmid(need(body.instance_id, "instance_id"))
    name = v.template_name(need(body.template_name, "template_name"))
    t = located(svc, body)
    target = {"instance_id": vmid, "key": t.key}
    return await jobs.answer(state, request, "px/image", target, lambda: svc.create_image(t, vmid, name))


@router.delete("/px/image/{template_name}", response_model=Result)
async def px_image_delete(svc: Svc, template_name: str, region: Region = None, az: Az = None) -> HostResult:
    """`pveam remove`; 404 when the template is not in the cache."""
    return await svc.delete_image(svc.target(region, az), v.template_name(template_name))


@router.post("/px/upload", response_model=Output)
async def px_upload(svc: Svc, body: UploadBody | None = body_opt) -> HostResult:
    """Copy a file of the upload directory into the host's template cache."""
    body = body or UploadBody()
    local = need(body.local_path, "local_path")
    name = v.template_name(need(body.remote_template_name, "remote_template_name"), "remote_template_name")
    return await svc.upload(located(svc, body), local, name)
