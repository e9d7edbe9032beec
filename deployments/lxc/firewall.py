"""Cluster firewall security groups through `pvesh` (stock tools read the same state)."""

from __future__ import annotations

import asyncio

from . import commands as cmd
from . import pve
from .errors import BadRequest, NotFound
from .hosts import Target
from .pve import GROUPS
from .responses import SecurityGroup
from .service import HostResult, R

RULE_KEYS = ("type", "action", "proto", "sport", "dport", "source", "dest")


async def list_groups(t: Target) -> list[SecurityGroup]:
    groups = await pve.groups(t.steps())

    async def with_rules(group: pve.FirewallGroup) -> SecurityGroup:
        rules = await pve.group_rules(t.steps(), group["group"])
        return SecurityGroup(
            group=group["group"], comment=group.get("comment", ""), rules=[dict(rule) for rule in rules]
        )

    return list(await asyncio.gather(*(with_rules(g) for g in groups)))


async def create_group(t: Target, name: str, description: str | None) -> HostResult:
    steps = t.steps()
    opts = {"group": name}
    if description:
        opts["comment"] = description
    await steps.run(cmd.pvesh("create", GROUPS, opts))
    return R(f"Security group '{name}' created.")


async def delete_group(t: Target, name: str, force: bool) -> HostResult:
    steps = t.steps()
    async with t.locked([f"fwgroup-{name}"]):
        rules = await pve.group_rules(steps, name)
        if rules and not force:
            raise BadRequest(
                f"security group '{name}' still has {len(rules)} rule(s); pass force=true to delete them first"
            )
        for pos in sorted((int(r["pos"]) for r in rules), reverse=True):
            await steps.run(cmd.pvesh("delete", f"{GROUPS}/{name}/{pos}"))
        await steps.run(cmd.pvesh("delete", f"{GROUPS}/{name}"))
    return R(f"Security group '{name}' deleted" + (f" with {len(rules)} rule(s)." if rules else "."))


RULE_DEFAULTS = {"type": "in", "action": "ACCEPT", "proto": "tcp"}


def with_defaults(fields: dict[str, str | None]) -> dict[str, str | None]:
    """A rule's fields with what a left-out direction, action and protocol mean (in, ACCEPT, tcp):
    the same for creating a rule and for finding it again to delete it."""
    return {**fields, **{key: fields.get(key) or default for key, default in RULE_DEFAULTS.items()}}


async def add_rule(t: Target, name: str, fields: dict[str, str | None]) -> HostResult:
    steps = t.steps()
    fields = with_defaults(fields)
    opts = cmd.firewall_rule_options(
        fields["type"] or "in",
        fields["action"] or "ACCEPT",
        fields["proto"] or "tcp",
        fields.get("sport"),
        fields.get("dport"),
        fields.get("source"),
        fields.get("dest"),
    )
    async with t.locked([f"fwgroup-{name}"]):
        await steps.run(cmd.pvesh("create", f"{GROUPS}/{name}", opts))
    return R(f"Rule added to security group '{name}'.")


def _matches(rule: pve.FirewallRule, fields: dict[str, str | None]) -> bool:
    for key in RULE_KEYS:
        wanted = fields.get(key)
        have = rule.get(key)
        if wanted is None:
            if have not in (None, ""):
                return False
        elif str(have) != wanted:
            return False
    return True


async def remove_rules(t: Target, name: str, fields: dict[str, str | None]) -> HostResult:
    """Delete every rule matching `fields` exactly, after the creation defaults are applied (so the
    body that created a rule deletes it); fields left out otherwise must be unset in the rule."""
    steps = t.steps()
    fields = with_defaults(fields)
    async with t.locked([f"fwgroup-{name}"]):
        rules = await pve.group_rules(steps, name)
        hits = sorted((int(r["pos"]) for r in rules if _matches(r, fields)), reverse=True)
        if not hits:
            raise BadRequest(f"no rule of security group '{name}' matches the given fields exactly")
        for pos in hits:
            await steps.run(cmd.pvesh("delete", f"{GROUPS}/{name}/{pos}"))
    return R(f"Removed {len(hits)} rule(s) from security group '{name}'.")


async def attach(t: Target, name: str, vmid: str, enable_firewall: bool) -> HostResult:
    steps = t.steps()
    node = await t.node(vmid)
    base = f"/nodes/{node}/lxc/{vmid}"
    messages: list[str] = []
    async with t.locked([vmid]):
        groups = await pve.groups(steps)
        if name not in {g["group"] for g in groups}:
            raise NotFound(f"no such security group '{name}'")
        rules = await pve.container_rules(steps, node, vmid)
        refs = [r for r in rules if r.get("type") == "group" and r.get("action") == name]
        if not refs:
            await steps.run(
                cmd.pvesh("create", f"{base}/firewall/rules", {"type": "group", "action": name, "enable": "1"})
            )
            messages.append(f"Security group '{name}' attached to CT {vmid}.")
        else:
            for ref in refs:
                if not int(ref.get("enable", 0)):
                    await steps.run(cmd.pvesh("set", f"{base}/firewall/rules/{ref['pos']}", {"enable": "1"}))
            messages.append(f"Security group '{name}' was already attached to CT {vmid}; reference enabled.")
        if enable_firewall:
            await steps.run(cmd.pvesh("set", f"{base}/firewall/options", {"enable": "1"}))
            config = await pve.config(steps, node, vmid)
            for key in sorted(k for k in config if k.startswith("net") and k[3:].isdigit()):
                value = str(config.get(key))
                parts = [p for p in value.split(",") if not p.startswith("firewall=")]
                await steps.run(cmd.pct_set(vmid, {key: ",".join([*parts, "firewall=1"])}))
            messages.append(f"Firewall enabled for CT {vmid} and firewall=1 set on its interfaces.")
        else:
            options = await pve.container_firewall(steps, node, vmid)
            if not int(options.get("enable", 0)):
                messages.append(
                    f"warning: the firewall of CT {vmid} is off, so the group's rules do not apply "
                    "yet (attach with enable_firewall: true to turn it on)."
                )
        cluster = await pve.cluster_firewall(steps)
        if not int(cluster.get("enable", 0)):
            messages.append("warning: the datacenter firewall (/cluster/firewall/options enable) is off.")
    return R("\n".join(messages))


async def detach(t: Target, name: str, vmid: str) -> HostResult:
    steps = t.steps()
    node = await t.node(vmid)
    base = f"/nodes/{node}/lxc/{vmid}"
    async with t.locked([vmid]):
        rules = await pve.container_rules(steps, node, vmid)
        hits = sorted(
            (int(r["pos"]) for r in rules if r.get("type") == "group" and r.get("action") == name), reverse=True
        )
        if not hits:
            raise BadRequest(f"security group '{name}' is not attached to CT {vmid}")
        for pos in hits:
            await steps.run(cmd.pvesh("delete", f"{base}/firewall/rules/{pos}"))
    return R(f"Security group '{name}' detached from CT {vmid}.")
