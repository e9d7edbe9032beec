"""Cluster firewall security groups, their rules, and attaching them to containers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from fastapi import APIRouter

from .. import firewall
from .. import validate as v
from ..errors import BadRequest
from ..models import AttachBody, DetachBody, GroupBody, RuleBody
from ..responses import Output, SecurityGroup
from ..service import HostResult
from .common import Az, Flag, Region, Svc, body_opt, located, need

router = APIRouter(tags=["security groups"])
T = TypeVar("T")
P = ParamSpec("P")


@router.get("/px/security-groups", response_model=list[SecurityGroup])
async def sg_list(svc: Svc, region: Region = None, az: Az = None) -> list[SecurityGroup]:
    return await firewall.list_groups(svc.target(region, az))


@router.post("/px/security-groups", response_model=Output)
async def sg_create(svc: Svc, body: GroupBody | None = body_opt) -> HostResult:
    body = body or GroupBody()
    name = v.group_name(need(body.group_name, "group_name"))
    description = body.description
    if description is not None and (len(description) > 200 or any(ord(c) < 32 for c in description)):
        raise BadRequest("'description' must be at most 200 printable characters")
    return await firewall.create_group(located(svc, body), name, description)


@router.delete("/px/security-groups/{group_name}", response_model=Output)
async def sg_delete(svc: Svc, group_name: str, region: Region = None, az: Az = None, force: Flag = None) -> HostResult:
    """A group that still has rules is deleted only with `force=true` (rules first, highest position first)."""
    return await firewall.delete_group(svc.target(region, az), v.group_name(group_name), v.query_flag(force, "force"))


def _optional(
    value: T | None, check: Callable[Concatenate[T, P], str], *args: P.args, **kwargs: P.kwargs
) -> str | None:
    return check(value, *args, **kwargs) if value is not None else None


def rule_fields(body: RuleBody) -> dict[str, str | None]:
    """The body's rule fields, each allow-listed, under the names `pvesh` uses."""
    return {
        "type": _optional(body.direction, v.choice, "direction", v.DIRECTIONS),
        "action": _optional(body.action, v.choice, "action", v.RULE_ACTIONS, upper=True),
        "proto": _optional(body.protocol, v.protocol),
        "source": _optional(body.source_ip, v.address_spec, "source_ip"),
        "sport": _optional(body.source_port, v.port_spec, "source_port"),
        "dest": _optional(body.destination_ip, v.address_spec, "destination_ip"),
        "dport": _optional(body.destination_port, v.port_spec, "destination_port"),
    }


@router.post("/px/security-groups/{group_name}/rules", response_model=Output)
async def sg_rule_add(svc: Svc, group_name: str, body: RuleBody | None = body_opt) -> HostResult:
    """Add a rule (defaults: in, ACCEPT, tcp)."""
    body = body or RuleBody()
    fields = rule_fields(body)
    proto = firewall.with_defaults(fields)["proto"]
    if (fields["sport"] or fields["dport"]) and proto not in ("tcp", "udp", "sctp"):
        raise BadRequest(f"ports need protocol tcp, udp or sctp, not {proto}")
    return await firewall.add_rule(located(svc, body), v.group_name(group_name), fields)


@router.delete("/px/security-groups/{group_name}/rules", response_model=Output)
async def sg_rule_remove(svc: Svc, group_name: str, body: RuleBody | None = body_opt) -> HostResult:
    """Remove every rule whose fields match exactly, with the creation defaults (in, ACCEPT, tcp) for a
    left-out direction, action or protocol, so the body that created a rule deletes it; other fields
    left out must be unset in the rule."""
    body = body or RuleBody()
    return await firewall.remove_rules(located(svc, body), v.group_name(group_name), rule_fields(body))


@router.post("/px/security-groups/attach", response_model=Output)
async def sg_attach(svc: Svc, body: AttachBody | None = body_opt) -> HostResult:
    body = body or AttachBody()
    name = v.group_name(need(body.group_name, "group_name"))
    vmid = v.vmid(need(body.vmid, "vmid"), "vmid")
    return await firewall.attach(located(svc, body), name, vmid, body.enable_firewall)


@router.post("/px/security-groups/detach", response_model=Output)
async def sg_detach(svc: Svc, body: DetachBody | None = body_opt) -> HostResult:
    body = body or DetachBody()
    name = v.group_name(need(body.group_name, "group_name"))
    vmid = v.vmid(need(body.vmid, "vmid"), "vmid")
    return await firewall.detach(located(svc, body), name, vmid)
