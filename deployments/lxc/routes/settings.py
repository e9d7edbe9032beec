"""Settings of an existing container: onboot, tags, description, startup order, net0's IPv6."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from .. import guestconfig
from .. import validate as v
from ..models import ConfigEditBody
from ..responses import JsonObject
from .common import INSTANCE, InstanceId, Svc, body_opt, located

router = APIRouter(tags=["containers"])


@router.post(f"{INSTANCE}/config", response_model=JsonObject)
async def config_edit(svc: Svc, instance_id: InstanceId, body: ConfigEditBody | None = body_opt) -> Any:
    """`pct set` for what is given (others stay): `onboot`, `tags` (list; `[]` clears), `description`
    (`""` clears), `startup_order` with optional `startup_up`/`startup_down` seconds (`clear_startup`
    removes it), `ipv6` (auto, dhcp, manual or address/prefix) and `gateway6` on net0. Answers the
    configuration afterwards (`pvesh`)."""
    body = body or ConfigEditBody()
    options, deletes = _changes(body)
    return await guestconfig.edit(located(svc, body), v.vmid(instance_id), options, deletes)


def _changes(body: ConfigEditBody) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    deletes: list[str] = []
    if body.onboot is not None:
        options["onboot"] = "1" if body.onboot else "0"
    if body.tags is not None:
        tags = v.tags(body.tags)
        options.update({"tags": tags} if tags else {})
        deletes += [] if tags else ["tags"]
    if body.description is not None:
        text = v.description(body.description)
        options.update({"description": text} if text else {})
        deletes += [] if text else ["description"]
    if body.clear_startup:
        if body.startup_order is not None:
            raise v.Invalid("'clear_startup' and 'startup_order' exclude each other")
        deletes.append("startup")
    elif body.startup_order is not None:
        options["startup"] = v.startup(body.startup_order, body.startup_up, body.startup_down)
    elif body.startup_up is not None or body.startup_down is not None:
        raise v.Invalid("'startup_up' and 'startup_down' need 'startup_order'")
    ip6 = guestconfig.ipv6_fields(body.ipv6, body.gateway6)
    if ip6 is not None:
        options["net0"] = ip6
    return options, deletes
