"""Container lifecycle: create, list, bulk actions, scale, clone, snapshots, volumes, backups."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rayfleet.ssh import SSHTarget

from . import commands as cmd
from . import pve
from . import validate as v
from .config import LxcConfig
from .errors import BadRequest, CommandFailed, NodeDown, NoQuorum, NotFound, combined_failure, describe
from .hosts import Steps, Target
from .responses import BackupDone, BulkDone, BulkResult, Cloned, Created, InstanceStatus
from .service import HostResult, R

LOCK_POLL_TRIES = 10
LOCK_POLL_DELAY = 1.0


@dataclass
class CreateRequest:
    image_id: str
    size: str
    count: int
    hostname: str | None
    password: str | None
    ip: str | None
    netmask: int
    gateway: str | None
    dns: str | None
    dhcp: bool
    ipv6: str | None  # net0's `ip6=...[,gw6=...]`
    storage_size: str | None
    features: str | None
    unprivileged: bool


async def create(t: Target, config: LxcConfig, req: CreateRequest) -> Created:
    size = config.instance_sizes[req.size]
    if req.storage_size:
        rootfs = f"{config.default_storage}:{max(1, round(v.size_in_gib(req.storage_size)))}"
    else:
        rootfs = size.storage
    net = cmd.net0(config.default_network, req.ip, req.netmask, req.gateway, req.dhcp, ipv6=req.ipv6)
    steps = t.steps()
    created: list[str] = []
    owner = uuid.uuid4().hex
    for _ in range(req.count):
        vmid_int = await t.allocate_vmid(owner)
        vmid = str(vmid_int)
        try:
            async with t.locked([vmid]):
                await steps.run(
                    cmd.pct_create(
                        vmid,
                        req.image_id,
                        size.memory,
                        f"{size.cpulimit:g}",
                        net,
                        rootfs,
                        req.hostname,
                        req.features,
                        req.unprivileged,
                        req.dns,
                    )
                )
                await _wait_unlocked(t, vmid, steps)
                await steps.run(cmd.pct("start", vmid))
                if req.password:
                    await steps.run(cmd.pct_exec(vmid, ["chpasswd"]), stdin=f"root:{req.password}\n")
        except CommandFailed as exc:
            failure = await reservation_refusal(t, exc)
            if created:
                failure.output = f"created and started before the failure: {', '.join(created)}\n{failure.output}"
            raise failure from None
        finally:
            await t.release_vmid(vmid_int, owner)
        created.append(vmid)
        steps.note(f"Instance {vmid} created and started.")
    return Created(output=steps.text(), instance_ids=created)


RESERVATION = re.compile(r"^Could not reserve ID \d+, already taken$", re.MULTILINE)


async def reservation_refusal(t: Target, exc: CommandFailed) -> CommandFailed:
    """`exc`, or a 503 naming quorum when it is PVE's `Could not reserve ID N, already taken` and the cluster
    has no quorum: PVE reserves a new guest's ID by creating its config in /etc/pve and takes any failure
    of that (a read-only /etc/pve included) for another node's reservation. `/cluster/status` says which."""
    if RESERVATION.search(exc.details) and await pve.quorate(t.steps()) is False:
        return NoQuorum(exc)
    return exc


async def _wait_unlocked(t: Target, vmid: str, steps: Steps) -> None:
    """Poll `pct config` until the creation lock is gone (a real create may leave it briefly)."""
    for _attempt in range(LOCK_POLL_TRIES):
        result = await t.run(cmd.pct("config", vmid))
        if not result.ok:
            raise CommandFailed(result.stderr, steps.text(), result.rc)
        if not any(line.startswith("lock:") for line in result.stdout.splitlines()):
            return
        await asyncio.sleep(LOCK_POLL_DELAY)
    raise CommandFailed(f"CT {vmid} is still locked after {LOCK_POLL_TRIES} checks", steps.text(), 1)


async def zone_view(t: Target, probe: bool = True) -> pve.ClusterView:
    """The zone's containers: every node's in a cluster (`/cluster/resources`), else the host's.
    In a cluster, the offline nodes are the configured ones the cluster reports offline and, with
    `probe`, the others whose SSH server does not answer (their pooled connection opened or reused;
    their containers' status `unknown`, as PVE shows a dead node's). A node the cluster already
    reports offline is not probed: a powered-off host often drops the SYN, costing `connect_timeout`."""
    if t.cluster is None:
        return pve.ClusterView(await pve.containers(t.steps(), await t.node()), [])
    view = await pve.cluster_view(t.steps())
    t.cluster.learn(list(view.containers))
    # only the zone's configured node names are reported (never a name as the host's JSON spells it)
    reported = {node for node in view.offline if node in t.cluster.nodes}
    unreachable = await t.unreachable_nodes(skip=reported) if probe else {}
    offline = reported | set(unreachable)
    rows = [
        pve.ContainerEntry(**{**row, "status": "unknown"}) if row.get("node") in unreachable else row
        for row in view.containers
    ]
    return pve.ClusterView(rows, sorted(offline))


async def list_instances(t: Target) -> list[pve.ContainerEntry]:
    """The zone's containers, without probing the nodes (a hung node must not hold up a bulk
    action on the others: its own containers answer 503 when their command is sent)."""
    return (await zone_view(t, probe=False)).containers


async def get_instance(t: Target, vmid: str) -> pve.ContainerConfig:
    return await pve.config(t.steps(), await t.node(vmid), vmid)


BulkOp = Callable[[Target, str, Steps, str], Awaitable[tuple[str, str | None]]]
"""One container's bulk action, given its current state: (outcome, state after)."""


async def _current(t: Target, vmid: str, steps: Steps) -> str:
    """`pct status` as its word: running, stopped (or what the host says)."""
    result = await steps.run(cmd.pct("status", vmid))
    return result.stdout.partition(":")[2].strip() or "unknown"


async def _start(t: Target, vmid: str, steps: Steps, now: str) -> tuple[str, str | None]:
    if now == "running":
        return "already running", now
    await steps.run(cmd.pct("start", vmid))
    return "started", "running"


async def _stop(t: Target, vmid: str, steps: Steps, now: str) -> tuple[str, str | None]:
    if now != "running":
        return "already stopped", now
    await steps.run(cmd.pct("shutdown", vmid))
    return "stopped", "stopped"


async def _reboot(t: Target, vmid: str, steps: Steps, now: str) -> tuple[str, str | None]:
    if now != "running":
        return f"not rebooted: {now}", now
    await steps.run(cmd.pct("reboot", vmid))
    return "rebooted", "running"


async def _terminate(t: Target, vmid: str, steps: Steps, now: str) -> tuple[str, str | None]:
    if now == "running":
        await steps.run(cmd.pct("stop", vmid))
    await steps.run(cmd.pct("destroy", vmid, "--purge"))
    return "destroyed", "destroyed"


BULK: dict[str, BulkOp] = {"start": _start, "stop": _stop, "reboot": _reboot, "terminate": _terminate}


async def require_existing(t: Target, vmids: list[str]) -> None:
    """404 before anything runs when a listed container is not on the host (one `pvesh` listing)."""
    listing = await list_instances(t)
    known = {str(c.get("vmid")) for c in listing if isinstance(c, dict)}
    unknown = [vmid for vmid in vmids if vmid not in known]
    if unknown:
        where = f"cluster nodes {', '.join(t.cluster.nodes)}" if t.cluster is not None else f"node {await t.node()}"
        raise NotFound(f"no container {', '.join(unknown)} on {t.key} ({where}); nothing was done")


async def bulk(t: Target, action: str, vmids: list[str]) -> BulkDone:
    """`action` on each container under its lock, reported per container: a container already in
    the wanted state (or stopped, for reboot) is an outcome, not an error."""
    op = BULK[action]

    async def one(vmid: str, steps: Steps) -> tuple[str, str | None]:
        return await op(t, vmid, steps, await _current(t, vmid, steps))

    return await each_container(t, vmids, one)


async def each_container(
    t: Target, vmids: list[str], work: Callable[[str, Steps], Awaitable[tuple[str, str | None]]]
) -> BulkDone:
    """Run `work` (-> outcome, state afterwards) on every container under its lock, after a 404 for
    an unknown id; a host failure is that container's `error`. Only when every container failed is
    the answer an error (the combined failure's status)."""
    await require_existing(t, vmids)

    async def one(vmid: str) -> tuple[str, BulkResult | CommandFailed]:
        try:
            async with t.locked([vmid]):
                outcome, state = await work(vmid, t.steps())
                return vmid, BulkResult(outcome=outcome, status=state, error=None)
        except CommandFailed as exc:
            return vmid, exc

    return reported_batch(dict(await asyncio.gather(*(one(x) for x in vmids))))


def reported_batch(
    results: Mapping[str, BulkResult | CommandFailed], texts: Mapping[str, str] | None = None
) -> BulkDone:
    """A bulk action's answer: each container's result (its host text, if any, before its line);
    only when every container failed, the combined failure."""
    failed = [(vmid, r) for vmid, r in results.items() if isinstance(r, CommandFailed)]
    if len(failed) == len(results):
        raise combined_failure(failed, "")
    report = {vmid: _reported(r) for vmid, r in results.items()}
    texts = texts or {}
    lines = [part for vmid, r in report.items() for part in (texts.get(vmid, ""), _line(vmid, r)) if part]
    return BulkDone(output="\n".join(lines), results=report)


def _reported(result: BulkResult | CommandFailed) -> BulkResult:
    if isinstance(result, BulkResult):
        return result
    return BulkResult(outcome="failed", status=None, error=describe(result) or f"exit {result.return_code}")


def _line(vmid: str, r: BulkResult) -> str:
    if r.error is not None:
        return f"Instance {vmid} failed: {r.error}"
    return f"Instance {vmid} {r.outcome}."


async def status(t: Target, vmids: list[str]) -> dict[str, InstanceStatus]:
    """Each container's state; load, memory, disk and swap for the running ones. A stopped
    container is reported as such; a failure is that container's `error`."""
    await require_existing(t, vmids)

    async def one(vmid: str) -> tuple[str, InstanceStatus | CommandFailed]:
        try:
            state = await _current(t, vmid, t.steps())
        except CommandFailed as exc:
            return vmid, exc
        if state != "running":
            return vmid, InstanceStatus(state=state)
        files, disk = await asyncio.gather(
            t.run(cmd.pct_exec(vmid, ["cat", *cmd.HOST_STATUS_FILES])), t.run(cmd.pct_exec(vmid, ["df", "-h", "/"]))
        )
        for result in (files, disk):
            if not result.ok:
                return vmid, InstanceStatus(state=state, error=result.stderr.strip() or f"exit {result.rc}")
        load, _, rest = files.stdout.partition("\n")
        meminfo, _, swaps = rest.partition("Filename")
        return vmid, InstanceStatus(
            state=state,
            loadavg=load.strip(),
            memory=_meminfo(meminfo),
            disk=disk.stdout.strip(),
            swap=("Filename" + swaps).strip(),
        )

    results = await asyncio.gather(*(one(x) for x in vmids))
    failed = [(vmid, r) for vmid, r in results if isinstance(r, CommandFailed)]
    if len(failed) == len(vmids):
        raise combined_failure(failed, "")
    return {
        vmid: r if isinstance(r, InstanceStatus) else InstanceStatus(state="unknown", error=r.details.strip())
        for vmid, r in results
    }


def _meminfo(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            out[key.strip() + "_kb"] = int(parts[0])
    return out


@dataclass
class ScaleRequest:
    memory: int | None
    cpulimit: str | None
    cpucores: int | None
    storage_size: str | None
    net_limit: str | None


async def scale(t: Target, vmids: list[str], req: ScaleRequest) -> BulkDone:
    """Set the limits of every container, reported per container as the other bulk actions are: a
    container whose configuration cannot be read (its node does not answer) is that container's
    `error` and the others are scaled. A value refused for any container that answered (a disk
    that would shrink, no net0 to limit) is a 400 before anything is changed."""
    await require_existing(t, vmids)
    node = await t.node()

    async def read(vmid: str) -> pve.ContainerConfig | CommandFailed:
        try:
            return await pve.config(t.steps(), node, vmid)
        except CommandFailed as exc:
            return exc

    async with t.locked(vmids):
        found = dict(zip(vmids, await asyncio.gather(*(read(vmid) for vmid in vmids)), strict=True))
        results: dict[str, BulkResult | CommandFailed] = {
            vmid: r for vmid, r in found.items() if isinstance(r, CommandFailed)
        }
        changes = {vmid: _scaled(vmid, c, req) for vmid, c in found.items() if not isinstance(c, CommandFailed)}
        texts: dict[str, str] = {}

        async def apply(vmid: str, options: dict[str, str]) -> tuple[str, BulkResult | CommandFailed]:
            steps = t.steps()
            try:
                if options:
                    await steps.run(cmd.pct_set(vmid, options))
                if req.storage_size:
                    await steps.run(cmd.pct("resize", vmid, "rootfs", req.storage_size))
            except CommandFailed as exc:
                return vmid, exc
            finally:
                texts[vmid] = steps.text()
            return vmid, BulkResult(outcome="scaled", status=None, error=None)

        results.update(await asyncio.gather(*(apply(vmid, options) for vmid, options in changes.items())))
    return reported_batch({vmid: results[vmid] for vmid in vmids}, texts)


def _scaled(vmid: str, config: pve.ContainerConfig, req: ScaleRequest) -> dict[str, str]:
    """The `pct set` options that scale `vmid` as `req` asks; 400 for a value its configuration refuses."""
    if req.storage_size and not req.storage_size.startswith("+"):
        wanted = v.size_in_gib(req.storage_size)
        current = _rootfs_gib(config)
        if current is not None and wanted < current:
            raise BadRequest(
                f"disks cannot shrink: CT {vmid} has a {current:g}G root disk, {req.storage_size} requested"
            )
    options: dict[str, str] = {}
    if req.memory is not None:
        options["memory"] = str(req.memory)
    if req.cpulimit is not None:
        options["cpulimit"] = req.cpulimit
    if req.cpucores is not None:
        options["cores"] = str(req.cpucores)
    if req.net_limit is not None:
        if "net0" not in config:
            raise BadRequest(f"CT {vmid} has no net0 interface to limit")
        parts = [p for p in str(config["net0"]).split(",") if not p.startswith("rate=")]
        options["net0"] = ",".join([*parts, f"rate={req.net_limit}"])
    return options


def _rootfs_gib(config: pve.ContainerConfig) -> float | None:
    for part in str(config.get("rootfs", "")).split(","):
        if part.startswith("size="):
            size = part[5:]
            unit = size[-1:].upper()
            number = float(size[:-1]) if unit in "KMGT" else float(size)
            return number * {"K": 1 / 1024**2, "M": 1 / 1024, "G": 1.0, "T": 1024.0}.get(unit, 1.0)
    return None


async def clone(t: Target, source: str, target_id: str | None, full: bool) -> Cloned:
    steps = t.steps()
    owner = uuid.uuid4().hex
    reserved: int | None = None
    if target_id is None:
        reserved = await t.allocate_vmid(owner)
        target_id = str(reserved)
    snap = f"clone{int(time.time() * 1000)}"
    try:
        async with t.locked([source, target_id]):
            await steps.run(cmd.pct("snapshot", source, snap))
            try:
                extra = ["--snapname", snap] + (["--full", "1"] if full else [])
                await steps.run(cmd.pct("clone", source, target_id, *extra))
            finally:
                await t.run(cmd.pct("delsnapshot", source, snap))
    finally:
        if reserved is not None:
            await t.release_vmid(reserved, owner)
    steps.note(f"Instance {source} cloned to {target_id} ({'full' if full else 'linked'} clone).")
    return Cloned(output=steps.text(), instance_id=target_id)


async def exec_in(t: Target, vmid: str, words: list[str]) -> HostResult:
    result = await t.run(cmd.pct_exec(vmid, words))
    if not result.ok:
        raise CommandFailed(result.stderr, result.stdout, result.rc)
    return R(result.stdout)


async def snapshot_create(t: Target, vmid: str, name: str) -> HostResult:
    async with t.locked([vmid]):
        await t.steps().run(cmd.pct("snapshot", vmid, name))
    return R(f"Snapshot '{name}' of instance {vmid} created.")


async def snapshot_list(t: Target, vmid: str) -> list[pve.Snapshot]:
    return await pve.snapshots(t.steps(), await t.node(), vmid)


async def snapshot_delete(t: Target, vmid: str, name: str) -> HostResult:
    async with t.locked([vmid]):
        await t.steps().run(cmd.pct("delsnapshot", vmid, name))
    return R(f"Snapshot '{name}' of instance {vmid} deleted.")


async def volume_detach(t: Target, vmid: str) -> HostResult:
    async with t.locked([vmid]):
        await t.steps().run(cmd.pct_set(vmid, {"delete": "mp0"}))
    return R(f"Volume mp0 detached from instance {vmid}.")


async def service(t: Target, vmid: str, action: str, name: str) -> HostResult:
    result = await t.run(cmd.pct_exec(vmid, ["systemctl", action, name]))
    if not result.ok:
        raise CommandFailed(result.stderr, result.stdout, result.rc)
    return R(result.stdout or f"systemctl {action} {name}: done in instance {vmid}.")


async def migrate(t: Target, vmid: str, node: str, restart: bool, target_storage: str | None) -> HostResult:
    extra = (["--restart"] if restart else []) + (["--target-storage", target_storage] if target_storage else [])
    async with t.locked([vmid]):
        steps = t.steps()
        await steps.run(cmd.pct("migrate", vmid, node, *extra), keep_stderr=True)
    return R(steps.text())


async def restore(
    t: Target, config: LxcConfig, vmid: str, backup_file: str, storage: str | None, no_start: bool
) -> HostResult:
    store = storage or config.default_storage
    steps = t.steps()
    async with t.locked([vmid]):
        status = await t.run(cmd.pct("status", vmid))
        if status.ok and "running" in status.stdout:
            await steps.run(cmd.pct("stop", vmid))
        try:
            await steps.run(cmd.pct("restore", vmid, backup_file, "--storage", store, "--force", "1"))
        except CommandFailed as exc:
            raise await reservation_refusal(t, exc) from None
        if not no_start:
            await steps.run(cmd.pct("start", vmid))
    steps.note(f"Instance {vmid} restored from {backup_file}" + (" (left stopped)." if no_start else " and started."))
    return R(steps.text())


async def backup(
    t: Target,
    config: LxcConfig,
    vmid: str,
    destination: str | None,
    storage: str | None,
    mode: str,
    compress: str,
    download: bool,
) -> BackupDone:
    steps = t.steps()
    async with t.locked([vmid]):
        result = await steps.run(
            cmd.vzdump(
                vmid, mode, compress, storage=storage, dumpdir=None if storage else (destination or cmd.DUMP_DIR)
            ),
            keep_stderr=True,
        )
    archive = cmd.archive_name(result.stdout + result.stderr)
    body = BackupDone(output=steps.text(), archive=archive)
    if download and archive:
        local_dir = Path(config.download_dir)
        local_dir.mkdir(parents=True, exist_ok=True)
        local = local_dir / Path(archive).name
        node = await t.holding(vmid)  # vzdump wrote the archive on the container's node

        async def fetch(key: str, host: SSHTarget) -> None:
            await node.pool.get_file(key, host, archive, str(local))

        try:
            await node.transfer(fetch)
        except NodeDown:
            raise
        except Exception as exc:
            raise CommandFailed(f"download of {archive} failed: {exc}", steps.text(), 1) from None
        body.downloaded_to = str(local)
    return body
