"""The service object routes call: host selection, the pool, locks, audit; host operations."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

import asyncssh
import yaml

from actors.lxc.locks import HostLocks
from rayfleet.config import masked
from rayfleet.logs import get_logger
from rayfleet.ssh import SSHPool, SSHTarget
from rayfleet.state import ActorHandle

from . import commands as cmd
from . import validate as v
from .config import LxcConfig, ZoneConfig
from .errors import BadRequest, CommandFailed, NodeDown, combined_failure
from .hosts import LockFactory, Target, default_lock_factory, lock_actor_name
from .placement import Placement
from .responses import HostEntry, TemplateEntry, UpdateDone, UpdateResult

log = get_logger("lxc")


class OutputBody(TypedDict):
    """The result envelope for text: ``{"output": text}``."""

    output: str


HostResult = OutputBody | dict[str, object] | list[object]
"""What `R` answers: the command's JSON object or array, else its text as ``{"output": ...}``."""


def R(text: str) -> HostResult:
    """The command result envelope: parsed JSON when stdout is JSON, else {"output": text}."""
    stripped = (text or "").strip()
    if stripped[:1] in ("{", "["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            pass
        else:
            if isinstance(parsed, dict | list):
                return parsed
    return {"output": stripped}


PATH_MAX = 4096  # Linux: the longest path a system call takes
NAME_MAX = 255  # and the longest name in it


def confined(base: str | Path, relative: str, field: str) -> Path:
    """`relative` resolved inside `base`; anything escaping it is refused, and so is what no
    filesystem call would take (a NUL or other control character, a name over 255 bytes,
    a path over 4096 bytes), before the path is resolved or touched."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in relative):
        raise BadRequest(f"'{field}' must not contain NUL or other control characters")
    encoded = relative.encode("utf-8", "surrogateescape")
    if len(encoded) > PATH_MAX or any(len(part) > NAME_MAX for part in encoded.split(b"/")):
        raise BadRequest(f"'{field}' is too long (names up to {NAME_MAX} bytes, paths up to {PATH_MAX})")
    root = Path(base).resolve()
    candidate = (root / relative).resolve() if not Path(relative).is_absolute() else Path(relative).resolve()
    if candidate != root and root not in candidate.parents:
        raise BadRequest(f"'{field}' must be inside the configured directory {root}")
    if len(str(candidate).encode("utf-8", "surrogateescape")) > PATH_MAX:
        raise BadRequest(f"'{field}' is too long (paths up to {PATH_MAX} bytes with the configured directory)")
    return candidate


STORAGES = ["pvesh", "get", "/cluster/resources", "--type", "storage", "--output-format", "json"]


async def _template_store(t: Target, storage: str) -> tuple[bool, str]:
    """(shared by every node, its template cache folder) for `storage`, as the cluster describes it."""
    steps = t.steps()
    rows = await steps.json(STORAGES)
    mine = [r for r in rows if isinstance(r, dict) and r.get("storage") == storage] if isinstance(rows, list) else []
    shared = bool(mine) and all(r.get("shared") == 1 for r in mine)
    described = await steps.json(cmd.pvesh("get", f"/storage/{storage}", json_out=True))
    path = described.get("path") if isinstance(described, dict) else None
    try:
        folder = v.abs_path(path, "path")
    except v.Invalid:
        raise CommandFailed(
            f"storage '{storage}' has no usable path for templates: {str(path)[:100]!r}", "", 1
        ) from None
    return shared, f"{folder}/template/cache"


def _updated(result: str | CommandFailed) -> UpdateResult:
    if isinstance(result, str):
        return UpdateResult(outcome="upgraded", error=None)
    outcome = "unreachable" if isinstance(result, NodeDown) else "failed"
    return UpdateResult(outcome=outcome, error=result.details.strip() or f"exit {result.return_code}")


_SHARED: dict[tuple[str, LockFactory], LxcService] = {}


def shared_service(config: LxcConfig, lock_factory: LockFactory = default_lock_factory) -> LxcService:
    """This process's service for `config` (one SSH pool for every job unpickled in it)."""
    key = (config.model_dump_json(), lock_factory)
    if key not in _SHARED:
        _SHARED[key] = LxcService(config, lock_factory)
    return _SHARED[key]


class LxcService:
    def __init__(
        self, config: LxcConfig, lock_factory: LockFactory = default_lock_factory, pool: SSHPool | None = None
    ) -> None:
        self.config = config
        self.pool = pool or SSHPool()
        self._lock_factory = lock_factory
        self._locks: dict[str, ActorHandle[HostLocks]] = {}
        self._clusters: dict[str, Placement] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its configuration: unpickled, it is the receiving process's `shared_service`."""
        return (shared_service, (self.config, self._lock_factory))

    # ------------------------------------------------------------ targets
    def target(self, region: object = None, az: object = None) -> Target:
        if region is not None and not isinstance(region, str):
            raise BadRequest("'region' must be a string")
        if az is not None and not isinstance(az, str):
            raise BadRequest("'az' must be a string")
        try:
            region_name, az_name, zone = self.config.zone(region, az)
        except v.Invalid as exc:
            raise BadRequest(str(exc)) from None
        name = lock_actor_name(region_name, az_name)
        if name not in self._locks:
            self._locks[name] = self._lock_factory(name)
        cluster = self._cluster(name, zone)
        return Target(self.config, self.pool, self._locks[name], region_name, az_name, zone, cluster, source=self)

    def _cluster(self, name: str, zone: ZoneConfig) -> Placement | None:
        """The zone's cluster (kept across requests, so its node hosts keep their pooled connections)."""
        if not zone.nodes:
            return None
        if name not in self._clusters:
            self._clusters[name] = Placement({node: zone.node_host(node) for node in zone.nodes})
        return self._clusters[name]

    def targets(self, region: object = None, az: object = None) -> list[Target]:
        """Every host when nothing is given; a region's hosts; or one zone."""
        if region is None and az is None:
            return [self.target(r, a) for r, reg in self.config.regions.items() for a in reg.availability_zones]
        if region is None:
            raise BadRequest("'az' needs 'region'")
        if az is None:
            if not isinstance(region, str) or region not in self.config.regions:
                raise BadRequest(f"unknown region '{str(region)[:64]}'")
            return [self.target(region, a) for a in self.config.regions[region].availability_zones]
        return [self.target(region, az)]

    # ------------------------------------------------------------- config
    def masked_config(self) -> dict[str, Any]:
        shown: dict[str, Any] = masked(self.config)
        return shown

    def validate_config(self) -> HostResult:
        problems: list[str] = []
        try:
            LxcConfig.model_validate(self.config.model_dump())
            warnings = self.config.check_startable()
        except ValueError as exc:
            raise BadRequest(f"configuration is invalid: {exc}") from None
        for region, reg in self.config.regions.items():
            for az, zone in reg.availability_zones.items():
                for label, path in (("key_file", zone.key_file), ("known_hosts", zone.known_hosts)):
                    if path and not Path(path).is_file():
                        problems.append(f"{region}/{az}: {label} {path} does not exist")
        if problems:
            raise BadRequest("configuration is invalid: " + "; ".join(problems))
        zones = sum(len(r.availability_zones) for r in self.config.regions.values())
        lines = [
            f"Configuration is valid: {len(self.config.regions)} region(s), {zones} availability zone(s), "
            f"{len(self.config.instance_sizes)} instance size(s)."
        ]
        lines += [f"warning: {w}" for w in warnings]
        return R("\n".join(lines))

    def backup_config(self, destination: object, timestamp: bool, compress: bool) -> HostResult:
        base = Path(self.config.conf_backup_dir)
        base.mkdir(parents=True, exist_ok=True)
        name = "lxc-config.yaml"
        if destination is not None:
            if not isinstance(destination, str) or not destination.strip():
                raise BadRequest("'destination_path' must be a non-empty string")
            target = confined(base, destination, "destination_path")
            if target.is_dir() or destination.endswith("/"):
                target = target / name
        else:
            target = base / name
        if timestamp:
            target = target.with_name(f"{target.stem}-{time.strftime('%Y%m%d-%H%M%S')}{target.suffix}")
        if compress:
            target = target.with_name(target.name + ".gz")
        text = yaml.safe_dump(self.masked_config(), sort_keys=False).encode()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(gzip.compress(text) if compress else text)
        except OSError as exc:  # e.g. a file where the path needs a folder
            raise BadRequest(f"'destination_path' cannot be written: {exc.strerror}") from None
        return R(f"Configuration backed up to {target} (secrets masked).")

    # ------------------------------------------------------------ audit
    def audit(self, event: Mapping[str, object]) -> None:
        path = Path(self.config.audit_log)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **event}
        with path.open("a") as fh:
            fh.write(json.dumps(record) + "\n")
        log.warning("host exec", extra={"audit": record})

    # -------------------------------------------------------------- hosts
    async def hosts(self, region: object) -> list[HostEntry]:
        if region is not None:
            targets = self.targets(region)
        else:
            targets = self.targets()

        async def probe(t: Target) -> HostEntry:
            port = t.zone.effective_port()
            entry = HostEntry(region=t.region, az=t.az, host=t.zone.host, port=port, reachable=False)
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(t.zone.host, port, type=socket.SOCK_STREAM)
                entry.addresses = sorted({str(i[4][0]) for i in infos})
            except OSError as exc:
                entry.error = f"DNS lookup failed: {exc}"
                return entry
            result = await t.pool.run(t.key, t.zone, ["hostname"], min(t.timeout, 30))
            entry.reachable = result.ok
            if result.ok:
                entry.node = result.stdout.strip()
                if t.node_name and entry.node.split(".")[0] != t.node_name:
                    entry.error = f"configured as node '{t.node_name}' but the host is '{entry.node}'"
            else:
                entry.error = result.stderr.strip()
            return entry

        return list(await asyncio.gather(*(probe(n) for t in targets for n in t.each_node())))

    async def host_status(self, t: Target) -> HostResult:
        steps = t.steps()
        files, disk = await asyncio.gather(t.run(["cat", *cmd.HOST_STATUS_FILES]), t.run(["df", "-h", "/"]))
        for result in (files, disk):
            if not result.ok:
                raise CommandFailed(result.stderr, result.stdout, result.rc)
        steps.note(files.stdout)
        steps.note(disk.stdout)
        return R(steps.text())

    async def reboot(self, t: Target, confirm: bool) -> HostResult:
        if not confirm:
            raise BadRequest("rebooting a host needs 'confirm': true")
        steps = t.steps()
        await steps.run(["reboot"])
        return R(f"Reboot of {t.zone.host} ({t.key}) initiated.")

    async def templates(self, t: Target) -> list[TemplateEntry]:
        steps = t.steps()
        result = await steps.run(["pveam", "list", self.config.template_storage])
        rows = []
        for line in result.stdout.splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 2:
                rows.append(TemplateEntry(volid=parts[0], size=parts[1]))
        return rows

    async def clusters(self, t: Target) -> HostResult:
        steps = t.steps()
        await steps.run(["pvecm", "status"])
        return R(steps.text())

    async def update(self, targets: list[Target]) -> UpdateDone:
        """`apt-get update` and `dist-upgrade` on every host at once, reported per host (as bulk
        container actions are): an error only when every host failed."""

        async def one(t: Target) -> tuple[str, str | CommandFailed]:
            steps = t.steps()
            try:
                await steps.run(cmd.apt_update())
                await steps.run(cmd.apt_dist_upgrade())
            except CommandFailed as exc:
                return t.key, exc
            return t.key, f"[{t.key}] {t.zone.host}\n{steps.text()}"

        results = await asyncio.gather(*(one(n) for t in targets for n in t.each_node()))
        failed = [(key, r) for key, r in results if isinstance(r, CommandFailed)]
        if len(failed) == len(results):
            raise combined_failure(failed, "\n".join(r.output for _, r in failed if r.output).strip())
        report = {key: _updated(r) for key, r in results}
        lines = [
            r if isinstance(r, str) else f"[{key}] {report[key].outcome}: {report[key].error}" for key, r in results
        ]
        return UpdateDone(output="\n".join(lines), results=report)

    async def cluster_services(self, t: Target, verb: str) -> HostResult:
        steps = t.steps()
        await steps.run(cmd.cluster_services(verb))
        return R(steps.text() or f"pve-cluster and corosync: {verb} done on {t.zone.host}.")

    async def backup_lxc(self, t: Target, vmid: str, storage: str, mode: str) -> HostResult:
        steps = t.steps()
        async with t.locked([vmid]):
            result = await steps.run(cmd.vzdump(vmid, mode, storage=storage), keep_stderr=True)
        archive = cmd.archive_name(result.stdout + result.stderr)
        return R(steps.text() + (f"\nArchive: {archive}" if archive else ""))

    async def host_backup(self, t: Target, backup_dir: str) -> HostResult:
        steps = t.steps()
        archive = f"{backup_dir}/proxmox-backup-{time.strftime('%Y%m%d-%H%M%S')}.tar.gz"
        await steps.run(["mkdir", "-p", backup_dir])
        await steps.run(["tar", "-czf", archive, "/etc/pve"])
        return R(f"Host configuration backed up to {archive} on {t.zone.host}.")

    async def create_image(self, t: Target, vmid: str, name: str) -> HostResult:
        """vzdump into a staging folder, then a move into the template cache, all on the node
        holding the container (in a cluster, vzdump only backs up its own node's guests)."""
        filename = name if ".tar." in name else f"{name}.tar.gz"
        staging = f"/var/tmp/rayfleet-image-{vmid}-{int(time.time())}"
        async with t.locked([vmid]):
            node = await t.holding(vmid)
            steps = node.steps()
            await steps.run(["mkdir", "-p", staging])
            try:
                # through the zone: a container moved behind the API's back is found (and the map
                # learns it; the staging folder is not there, so this request fails, the next works)
                dump = t.steps()
                result = await dump.run(cmd.vzdump(vmid, "stop", compress="gzip", dumpdir=staging), keep_stderr=True)
                steps.note(dump.text())
                archive = cmd.archive_name(result.stdout + result.stderr)
                if not archive:
                    raise CommandFailed("vzdump did not report an archive name", steps.text(), 1)
                await steps.run(["mv", archive, f"{cmd.TEMPLATE_CACHE}/{filename}"])
            finally:
                with contextlib.suppress(CommandFailed):  # a node gone meanwhile: nothing to clean there
                    await node.run(["rm", "-rf", staging])
        where = f" on node {node.node_name}" if node.node_name else ""
        return R(f"Template image {self.config.template_storage}:vztmpl/{filename} created from CT {vmid}{where}.")

    async def delete_image(self, t: Target, name: str) -> HostResult:
        filename = name if ".tar." in name else f"{name}.tar.gz"
        steps = t.steps()
        await steps.run(["pveam", "remove", f"{self.config.template_storage}:vztmpl/{filename}"])
        return R(steps.text())

    async def upload(self, t: Target, local_path: str, remote_name: str) -> HostResult:
        source = confined(self.config.upload_dir, local_path, "local_path")
        if not source.is_file():
            raise BadRequest(f"'local_path' {local_path} is not a file in the upload directory")
        if not remote_name.endswith((".tar.gz", ".tar.xz", ".tar.zst")):
            raise BadRequest("'remote_template_name' must end with .tar.gz, .tar.xz or .tar.zst")
        storage = self.config.template_storage
        shared, cache = (False, cmd.TEMPLATE_CACHE) if t.cluster is None else await _template_store(t, storage)

        async def put(key: str, host: SSHTarget) -> None:
            await self.pool.put_file(key, host, str(source), f"{cache}/{remote_name}")

        try:
            key = await t.transfer(put, anywhere=shared)
        except NodeDown as exc:
            if t.cluster is None or shared:
                raise
            raise NodeDown(f"template storage '{storage}' is the entry node's own disk: {exc.details}") from None
        except (OSError, asyncssh.Error) as exc:
            raise CommandFailed(f"upload failed: {exc}", "", 1) from None
        where = f"node {key.partition('@')[2]}" if "@" in key else t.zone.host
        return R(f"Uploaded {source.name} as {storage}:vztmpl/{remote_name} on {where}.")

    async def host_exec(self, t: Target, words: list[str], who: Mapping[str, str]) -> HostResult:
        where = {"region": t.region, "az": t.az, "host": t.zone.host, "argv": words, **who}
        self.audit({"event": "px.exec.start", **where})
        result = await t.run(words)
        self.audit({"event": "px.exec", **where, "return_code": result.rc})
        if not result.ok:
            raise CommandFailed(result.stderr, result.stdout, result.rc)
        return R(result.stdout)
