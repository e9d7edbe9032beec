"""Container settings a Proxmox admin edits after creation: snapshot rollback, onboot, tags,
description, startup order, mount points mp0-mp9 and net0's IPv6, all through `pct` (as a
real host is driven) and read back with `pvesh`."""

from __future__ import annotations

from . import commands as cmd
from . import pve
from . import validate as v
from .errors import BadRequest, HTTPProblem, NotFound
from .hosts import Steps, Target
from .service import HostResult, R


async def rollback(t: Target, vmid: str, name: str, start: bool) -> HostResult:
    """`pct rollback <id> <snap> [--start 1]`: the host stops a running container first."""
    steps = t.steps()
    async with t.locked([vmid]):
        await steps.run(cmd.pct("rollback", vmid, name, *(["--start", "1"] if start else [])))
    return R(f"Instance {vmid} rolled back to snapshot '{name}'" + (" and started." if start else " (stopped)."))


async def edit(t: Target, vmid: str, options: dict[str, str], deletes: list[str]) -> pve.ContainerConfig:
    """`pct set` with the options (and `--delete` for cleared ones); answers the configuration after."""
    if not options and not deletes:
        raise BadRequest("nothing to change: give onboot, tags, description, startup_order, ipv6 or gateway6")
    steps = t.steps()
    async with t.locked([vmid]):
        node = await t.node()
        if "net0" in options:
            options["net0"] = await _net0_with(steps, node, vmid, options["net0"])
        await steps.run(cmd.pct_set(vmid, {**options, **({"delete": ",".join(deletes)} if deletes else {})}))
        return await pve.config(steps, node, vmid)


async def _net0_with(steps: Steps, node: str, vmid: str, ipv6: str) -> str:
    """net0 as it is, with ip6 (and gw6) replaced: `ipv6=<setting>[,gw6=<address>]` is passed in."""
    current = (await pve.config(steps, node, vmid)).get("net0")
    if not current:
        raise BadRequest(f"CT {vmid} has no net0 interface")
    fields = [p for p in str(current).split(",") if not p.startswith(("ip6=", "gw6="))]
    return ",".join([*fields, *ipv6.split(",")])


def ipv6_fields(setting: str | None, gateway: str | None) -> str | None:
    """net0's `ip6=...[,gw6=...]` for an IPv6 setting; a gateway needs a static address."""
    if setting is None:
        if gateway is not None:
            raise BadRequest("'gateway6' needs 'ipv6' (an address with its prefix)")
        return None
    ip6 = v.ipv6_setting(setting)
    if gateway is None:
        return f"ip6={ip6}"
    if "/" not in ip6:
        raise BadRequest("'gateway6' goes with a static 'ipv6' address, not auto, dhcp or manual")
    return f"ip6={ip6},gw6={v.ipv6(gateway, 'gateway6')}"


async def attach(t: Target, vmid: str, slot: str | None, storage: str, gib: int, path: str) -> HostResult:
    """A new volume at `path` in `slot` (default: the first free of mp0-mp9)."""
    steps = t.steps()
    async with t.locked([vmid]):
        config = await pve.config(steps, await t.node(), vmid)
        used = {s: str(config.get(s, "")) for s in v.MOUNT_SLOTS if config.get(s)}
        if any(f",mp={path}," in f",{value}," for value in used.values()):
            raise BadRequest(f"'mount_point' {path} is already mounted in CT {vmid}")
        if slot is None:
            slot = next((s for s in v.MOUNT_SLOTS if s not in used), None)
            if slot is None:
                raise HTTPProblem(409, f"CT {vmid} already uses every mount point mp0-mp9")
        elif slot in used:
            raise HTTPProblem(409, f"{slot} of CT {vmid} is in use; detach it first")
        await steps.run(cmd.pct_set(vmid, {slot: f"{storage}:{gib},mp={path}"}))
    return R(f"Volume {storage}:{gib}G attached to instance {vmid} at {path} ({slot}).")


async def detach(t: Target, vmid: str, slot: str) -> HostResult:
    """`pct set --delete <slot>`; the volume is kept as an `unusedN` disk, as Proxmox does."""
    steps = t.steps()
    async with t.locked([vmid]):
        config = await pve.config(steps, await t.node(), vmid)
        if not config.get(slot):
            raise NotFound(f"CT {vmid} has no {slot} mount point")
        await steps.run(cmd.pct_set(vmid, {"delete": slot}))
    return R(f"Volume {slot} detached from instance {vmid}.")
