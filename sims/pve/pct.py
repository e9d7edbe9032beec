"""`pct`: the Proxmox Container Toolkit, as far as the API uses it."""

from __future__ import annotations

import asyncio
import io
import ipaddress
import re
import tarfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .cli import Result, ToolError, check_vmid, param_error, parse_options, table
from .guest import Guest
from .model import (
    NO_QUORUM,
    Config,
    Container,
    NodeModel,
    clone_config,
    format_size,
    join_volume,
    parse_size,
    random_mac,
    volume_options,
)

SNAPNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]{1,39}$")
HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
NET_KEY = re.compile(r"^net(\d)$")
MP_KEY = re.compile(r"^mp(\d{1,3})$")
TAG = re.compile(r"^[a-z0-9_][a-z0-9_\-+.]*$", re.IGNORECASE)  # PVE's pve-tag format
STARTUP = re.compile(r"^(?:order=)?\d+(?:,(?:up|down)=\d+)*$|^(?:up|down)=\d+(?:,(?:up|down)=\d+)?$")
DESCRIPTION_MAX = 8192

CONFIG_OPTIONS = {
    "memory": "int",
    "swap": "int",
    "cores": "int",
    "cpulimit": "num",
    "cpuunits": "int",
    "hostname": "str",
    "onboot": "bool",
    "features": "str",
    "unprivileged": "bool",
    "nameserver": "str",
    "searchdomain": "str",
    "description": "str",
    "rootfs": "str",
    "arch": "str",
    "ostype": "str",
    "tags": "str",
    "startup": "str",
    "protection": "bool",
    **{f"net{i}": "str" for i in range(10)},
    **{f"mp{i}": "str" for i in range(10)},
}
CREATE_OPTIONS = {
    **CONFIG_OPTIONS,
    "password": "str",
    "storage": "str",
    "start": "bool",
    "ssh-public-keys": "str",
    "pool": "str",
    "restore": "bool",
    "force": "bool",
}
READ_ONLY_EXEC = ("cat",)  # in-container commands that change nothing: no save after them
SET_OPTIONS = {**CONFIG_OPTIONS, "delete": "str", "revert": "str"}

Handler = Callable[[NodeModel, list[str], bytes], Awaitable[Result]]


class Pct:
    """Command handlers; `guest` runs commands inside a container for `pct exec`."""

    def __init__(self, model: NodeModel, guest: Guest, op_delay: float = 0.0) -> None:
        self.model = model
        self.guest = guest
        self.op_delay = op_delay

    async def run(self, args: list[str], stdin: bytes) -> Result:
        if not args:
            raise ToolError("ERROR: no command specified\nUSAGE: pct <COMMAND> [ARGS] [OPTIONS]")
        sub, rest = args[0], args[1:]
        handler: Callable[[list[str], bytes], Awaitable[Result]] | None = getattr(
            self, "cmd_" + sub.replace("-", "_"), None
        )
        if handler is None:
            raise ToolError(f"unknown command 'pct {sub}'\nUSAGE: pct <COMMAND> [ARGS] [OPTIONS]")
        return await handler(rest, stdin)

    # ------------------------------------------------------------- helpers
    def _get(self, vmid: str) -> Container:
        vmid = check_vmid(vmid)
        ct = self.model.containers.get(vmid)
        if ct is None:
            raise ToolError(f"Configuration file '{self.model.conf_path(vmid)}' does not exist")
        return ct

    @staticmethod
    def _check_lock(ct: Container) -> None:
        if ct.get("lock"):
            raise ToolError(f"CT is locked ({ct['lock']})")

    async def _locked(self, ct: Container, lock: str) -> None:
        """Hold `lock` on the container for the configured operation delay."""
        if self.op_delay <= 0:
            return
        ct["lock"] = lock
        self.model.save()
        try:
            await asyncio.sleep(self.op_delay)
        finally:
            ct["lock"] = None

    def _validate_config(self, vmid: str, opts: dict[str, str], ct_config: Config) -> Config:
        """Turn `pct create/set` options into config entries (allocating volumes)."""
        changes: Config = {}
        for key, value in opts.items():
            if key in ("memory", "swap") and int(value) < (16 if key == "memory" else 0):
                raise param_error(key, f"value must have a minimum value of {16 if key == 'memory' else 0}")
            if key == "cores" and not 1 <= int(value) <= 8192:
                raise param_error(key, "value must have a minimum value of 1")
            if key == "cpulimit" and not 0 <= float(value) <= 8192:
                raise param_error(key, "value must have a maximum value of 8192")
            if key == "hostname" and not HOSTNAME.match(value):
                raise param_error(key, "value does not match the regex pattern")
            if key == "features":
                for item in value.split(","):
                    name, _, flag = item.partition("=")
                    if name not in ("nesting", "keyctl", "fuse", "mknod", "mount", "force_rw_sys") or flag not in (
                        "0",
                        "1",
                        "",
                    ):
                        raise param_error(
                            key,
                            f"invalid format - format error\n{key}.{name}: property is not defined in schema and the schema does not allow additional properties",
                        )
            self._check_text_option(key, value)
            if NET_KEY.match(key):
                value = self._net_value(key, value, ct_config.get(key))
            if key == "rootfs" or MP_KEY.match(key):
                value = self._volume_value(vmid, key, value)
            typed: str | int | float = value
            if key in ("onboot", "unprivileged", "protection") or key in ("memory", "swap", "cores", "cpuunits"):
                typed = int(value)
            elif key == "cpulimit":
                typed = float(value) if "." in value else int(value)
            changes[key] = typed
        return changes

    @staticmethod
    def _check_text_option(key: str, value: str) -> None:
        """tags (pve-tag list, `;`, `,` or space separated), startup (`[order=]N[,up=N][,down=N]`),
        description (8 KiB at most)."""
        if key == "tags":
            for tag in re.split(r"[;, ]+", value.strip()):
                if tag and not TAG.match(tag):
                    raise param_error(key, f"invalid format - invalid tag '{tag}'")
        if key == "startup" and not STARTUP.match(value):
            raise param_error(key, "invalid format - format error\nstartup: value does not match the regex pattern")
        if key == "description" and len(value.encode()) > DESCRIPTION_MAX:
            raise param_error(key, f"value may only be {DESCRIPTION_MAX} characters long")

    @staticmethod
    def _check_addresses(key: str, fields: dict[str, str]) -> None:
        """ip: dhcp, manual or an IPv4 CIDR; gw an IPv4 address; ip6: auto, dhcp, manual or an
        IPv6 CIDR; gw6 an IPv6 address (pct's format checks)."""
        checks = (
            ("ip", ipaddress.IPv4Interface, ("dhcp", "manual"), True),
            ("gw", ipaddress.IPv4Address, (), False),
            ("ip6", ipaddress.IPv6Interface, ("auto", "dhcp", "manual"), True),
            ("gw6", ipaddress.IPv6Address, (), False),
        )
        for name, parse, words, cidr in checks:
            value = fields.get(name)
            if value is None or value in words:
                continue
            try:
                if cidr and "/" not in value:
                    raise ValueError(value)
                parse(value)
            except ValueError:
                kind = "CIDR" if cidr else "address"
                raise param_error(
                    key,
                    f"invalid format - format error\n{key}.{name}: invalid format - value does not look like a valid {'IPv6' if '6' in name else 'IPv4'} {kind}",
                ) from None

    def _net_value(self, key: str, value: str, current: Any) -> str:
        fields: dict[str, str] = {}
        for part in value.split(","):
            if "=" not in part:
                raise param_error(
                    key, f"invalid format - format error\n{key}.{part}: property is not defined in schema"
                )
            k, v = part.split("=", 1)
            if k not in (
                "name",
                "bridge",
                "hwaddr",
                "ip",
                "gw",
                "ip6",
                "gw6",
                "firewall",
                "rate",
                "tag",
                "type",
                "mtu",
            ):
                raise param_error(
                    key,
                    f"invalid format - format error\n{key}.{k}: property is not defined in schema and the schema does not allow additional properties",
                )
            fields[k] = v
        if "name" not in fields:
            raise param_error(key, "invalid format - format error\nname: property is missing and it is not optional")
        self._check_addresses(key, fields)
        if current and "hwaddr" not in fields:
            _, cur = volume_options("x," + str(current))
            if "hwaddr" in cur:
                fields["hwaddr"] = cur["hwaddr"]
        fields.setdefault("hwaddr", random_mac())
        fields.setdefault("type", "veth")
        order = ["name", "bridge", "firewall", "gw", "hwaddr", "ip", "rate", "tag", "type"]
        ordered = {k: fields[k] for k in order if k in fields}
        ordered.update({k: v for k, v in fields.items() if k not in ordered})
        return ",".join(f"{k}={v}" for k, v in ordered.items())

    def _volume_value(self, vmid: str, key: str, value: str) -> str:
        volid, opts = volume_options(value)
        storage, _, size = volid.partition(":")
        if storage not in self.model.storages:
            raise ToolError(f"storage '{storage}' does not exist")
        if "rootdir" not in self.model.storages[storage]["content"]:
            raise ToolError(f"storage '{storage}' does not support container directories")
        if key != "rootfs" and "mp" not in opts:
            raise param_error(key, "invalid format - format error\nmp: property is missing and it is not optional")
        if re.fullmatch(r"\d+(\.\d+)?", size):
            new = self.model.alloc_disk(storage, vmid)
            opts["size"] = format_size(float(size))
            return join_volume(new, {k: v for k, v in opts.items() if k != "size"} | {"size": opts["size"]})
        return value

    # ------------------------------------------------------------- commands
    async def cmd_list(self, args: list[str], stdin: bytes) -> Result:
        parse_options(args, {})
        rows = [["VMID", "Status", "Lock", "Name"]]
        for vmid in sorted(self.model.containers, key=int):
            ct = self.model.containers[vmid]
            rows.append([vmid, ct["status"], ct.get("lock") or "", ct["config"].get("hostname", f"CT{vmid}")])
        return Result(table(rows, [10, 10, 12, 20]))

    async def cmd_config(self, args: list[str], stdin: bytes) -> Result:
        pos, opts = parse_options(args, {"current": "bool", "snapshot": "str"})
        ct = self._get(pos[0] if pos else "")
        config = ct["config"]
        if "snapshot" in opts:
            snap = ct["snapshots"].get(opts["snapshot"])
            if snap is None:
                raise ToolError(f"snapshot '{opts['snapshot']}' does not exist")
            config = snap["config"]
        lines = [f"{k}: {v}" for k, v in sorted(config.items())]
        if ct.get("lock"):
            lines.append(f"lock: {ct['lock']}")
            lines.sort()
        return Result("\n".join(lines) + "\n")

    async def cmd_status(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {"verbose": "bool"})
        ct = self._get(pos[0] if pos else "")
        return Result(f"status: {ct['status']}\n")

    async def cmd_create(self, args: list[str], stdin: bytes) -> Result:
        usage = "pct create <vmid> <ostemplate> [OPTIONS]"
        pos, opts = parse_options(args, CREATE_OPTIONS, usage)
        if len(pos) != 2:
            raise ToolError(f"400 not enough arguments\n{usage}")
        vmid = check_vmid(pos[0])
        template = pos[1]
        if int(vmid) in self.model.all_vmids():
            raise ToolError(f"CT {vmid} already exists on node '{self.model.node}'")
        store, _, volname = template.partition(":")
        if store != "local" or not volname.startswith(("vztmpl/", "backup/")):
            raise ToolError(f"unable to parse volume ID '{template}'")
        sub = "template/cache" if volname.startswith("vztmpl/") else "dump"
        archive = self.model.host_path(f"/var/lib/vz/{sub}/" + volname.split("/", 1)[1])
        if not archive.is_file():
            raise ToolError(f"volume '{template}' does not exist")
        self._check_reservable(vmid)
        opts.pop("password", None)
        start = opts.pop("start", "0") == "1"
        for dropped in ("storage", "ssh-public-keys", "pool", "restore", "force"):
            opts.pop(dropped, None)
        opts.setdefault("rootfs", "local-lvm:4")
        config: Config = {
            "arch": "amd64",
            "hostname": f"CT{vmid}",
            "memory": 512,
            "swap": 512,
            "ostype": _ostype(volname),
        }
        config.update(self._validate_config(vmid, opts, {}))
        ct = self.model.new_container(vmid, config)
        await self._locked(ct, "create")
        out = [
            f'  Logical volume "{config["rootfs"].split(",")[0].split(":")[1]}" created.',
            f"extracting archive '{archive.relative_to(self.model.fs_root).as_posix().join(['/', ''])}'",
            f"Total bytes read: {archive.stat().st_size}",
            "Detected container architecture: amd64",
            "Creating SSH host key 'ssh_host_ed25519_key' - this may take some time ...",
        ]
        if start:
            ct["status"] = "running"
            ct["started_at"] = time.time()
        self.model.save()
        return Result("\n".join(out) + "\n")

    async def cmd_start(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {"skiplock": "bool", "debug": "bool"})
        vmid = check_vmid(pos[0] if pos else "")
        ct = self._get(vmid)
        self._check_lock(ct)
        if ct["config"].get("template"):
            raise ToolError("cannot start a template")
        if ct["status"] == "running":
            raise ToolError(f"CT {vmid} already running")
        self._check_quorum()
        ct["status"] = "running"
        ct["started_at"] = time.time()
        self.model.save()
        return Result()

    async def _stop(self, args: list[str], schema: dict[str, str]) -> Result:
        pos, _ = parse_options(args, schema)
        vmid = check_vmid(pos[0] if pos else "")
        ct = self._get(vmid)
        self._check_lock(ct)
        if ct["status"] != "running":
            raise ToolError(f"CT {vmid} not running")
        ct["status"] = "stopped"
        ct["started_at"] = None
        self.model.save()
        return Result()

    async def cmd_shutdown(self, args: list[str], stdin: bytes) -> Result:
        return await self._stop(args, {"timeout": "int", "forceStop": "bool"})

    async def cmd_stop(self, args: list[str], stdin: bytes) -> Result:
        return await self._stop(args, {"skiplock": "bool", "overrule-shutdown": "bool"})

    async def cmd_reboot(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {"timeout": "int"})
        vmid = check_vmid(pos[0] if pos else "")
        ct = self._get(vmid)
        self._check_lock(ct)
        if ct["status"] != "running":
            raise ToolError(f"CT {vmid} not running")
        ct["started_at"] = time.time()
        self.model.save()
        return Result()

    async def cmd_destroy(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {"purge": "bool", "force": "bool", "destroy-unreferenced-disks": "bool"})
        vmid = check_vmid(pos[0] if pos else "")
        ct = self._get(vmid)
        self._check_lock(ct)
        if ct["config"].get("protection"):
            raise ToolError("can't remove CT - protection mode enabled")
        if ct["status"] == "running":
            raise ToolError(f"unable to destroy CT {vmid} - container is running")
        self._check_writable(vmid)
        volumes = [
            str(v).split(",")[0]
            for k, v in ct["config"].items()
            if k == "rootfs" or MP_KEY.match(k) or k.startswith("unused")
        ]
        del self.model.containers[vmid]
        self.model.save()
        return Result("".join(f'  Logical volume "{v.split(":")[1]}" successfully removed.\n' for v in volumes))

    async def cmd_set(self, args: list[str], stdin: bytes) -> Result:
        pos, opts = parse_options(args, SET_OPTIONS, "pct set <vmid> [OPTIONS]")
        vmid = check_vmid(pos[0] if pos else "")
        ct = self._get(vmid)
        self._check_lock(ct)
        deletes = [d for d in opts.pop("delete", "").replace(";", ",").split(",") if d]
        opts.pop("revert", None)
        for key in deletes:
            if key not in CONFIG_OPTIONS and not key.startswith("unused"):
                raise param_error("delete", f"unable to delete unknown option '{key}'")
        changes = self._validate_config(vmid, opts, ct["config"])
        self._check_writable(vmid)
        config = ct["config"]
        load = self.guest.loads()
        if load is not None:
            load.advance(vmid, config, ct["status"] == "running")
        for key in deletes:
            value = config.pop(key, None)
            if value is not None and MP_KEY.match(key):
                self._park_unused(config, str(value))
        for key, value in changes.items():
            if MP_KEY.match(key) and key in config and str(config[key]).split(",")[0] != str(value).split(",")[0]:
                self._park_unused(config, str(config[key]))
            config[key] = value
        self.model.save()
        return Result()

    @staticmethod
    def _park_unused(config: Config, value: str) -> None:
        n = 0
        while f"unused{n}" in config:
            n += 1
        config[f"unused{n}"] = value.split(",")[0]

    async def cmd_resize(self, args: list[str], stdin: bytes) -> Result:
        usage = "pct resize <vmid> <disk> <size> [OPTIONS]"
        pos, _ = parse_options(args, {"digest": "str"}, usage)
        if len(pos) != 3:
            raise ToolError(f"400 not enough arguments\n{usage}")
        vmid, disk, size = check_vmid(pos[0]), pos[1], pos[2]
        ct = self._get(vmid)
        self._check_lock(ct)
        if disk != "rootfs" and not MP_KEY.match(disk):
            raise param_error(
                "disk", f"value '{disk}' does not have a value in the enumeration 'rootfs, mp0, mp1, ...'"
            )
        if not re.fullmatch(r"\+?\d+(\.\d+)?[KMGT]?", size):
            raise param_error("size", "value does not match the regex pattern")
        if disk not in ct["config"]:
            raise ToolError(f"disk '{disk}' does not exist")
        volid, opts = volume_options(str(ct["config"][disk]))
        current = parse_size(opts.get("size", "0G"))
        if size.startswith("+"):
            new = current + parse_size(size[1:])
        else:
            new = parse_size(size)
        if new < current:
            raise ToolError("unable to shrink disk size")
        self._check_writable(vmid)
        opts["size"] = format_size(new)
        ct["config"][disk] = join_volume(volid, opts)
        self.model.save()
        lv = volid.split(":")[1]
        return Result(
            f"  Size of logical volume pve/{lv} changed from {format_size(current)} to {format_size(new)}.\n"
            f"  Logical volume pve/{lv} successfully resized.\n"
        )

    async def cmd_snapshot(self, args: list[str], stdin: bytes) -> Result:
        pos, opts = parse_options(args, {"description": "str"}, "pct snapshot <vmid> <snapname>")
        if len(pos) != 2:
            raise ToolError("400 not enough arguments\npct snapshot <vmid> <snapname> [OPTIONS]")
        vmid, name = check_vmid(pos[0]), pos[1]
        ct = self._get(vmid)
        self._check_lock(ct)
        if not SNAPNAME.match(name) or name == "current":
            raise param_error("snapname", f"invalid format - invalid configuration ID '{name}'")
        if name in ct["snapshots"]:
            raise ToolError(f"snapshot name '{name}' already used")
        self._check_writable(vmid)
        await self._locked(ct, "snapshot")
        ct["snapshots"][name] = {
            "config": clone_config(ct["config"]),
            "snaptime": int(time.time()),
            "description": opts.get("description", ""),
            "parent": ct.get("parent"),
        }
        ct["parent"] = name
        self.model.save()
        return Result()

    async def cmd_delsnapshot(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {"force": "bool"})
        if len(pos) != 2:
            raise ToolError("400 not enough arguments\npct delsnapshot <vmid> <snapname> [OPTIONS]")
        vmid, name = check_vmid(pos[0]), pos[1]
        ct = self._get(vmid)
        self._check_lock(ct)
        if name not in ct["snapshots"]:
            raise ToolError(f"snapshot '{name}' does not exist")
        self._check_writable(vmid)
        removed = ct["snapshots"].pop(name)
        for snap in ct["snapshots"].values():
            if snap.get("parent") == name:
                snap["parent"] = removed.get("parent")
        if ct.get("parent") == name:
            ct["parent"] = removed.get("parent")
        self.model.save()
        return Result()

    async def cmd_rollback(self, args: list[str], stdin: bytes) -> Result:
        """As pct: a running container is stopped, its configuration is the snapshot's; `--start 1`
        starts it again afterwards."""
        pos, opts = parse_options(args, {"start": "bool"})
        if len(pos) != 2:
            raise ToolError("400 not enough arguments\npct rollback <vmid> <snapname> [OPTIONS]")
        vmid, name = check_vmid(pos[0]), pos[1]
        ct = self._get(vmid)
        self._check_lock(ct)
        if name not in ct["snapshots"]:
            raise ToolError(f"snapshot '{name}' does not exist")
        self._check_writable(vmid)
        await self._locked(ct, "rollback")
        ct["config"] = clone_config(ct["snapshots"][name]["config"])
        ct["parent"] = name
        start = opts.get("start") in ("1", "true", "yes", "on")
        ct["status"] = "running" if start else "stopped"
        ct["started_at"] = time.time() if start else None
        self.model.save()
        return Result()

    async def cmd_listsnapshot(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {})
        ct = self._get(pos[0] if pos else "")
        children: dict[Any, list[str]] = {}
        for name, snap in ct["snapshots"].items():
            children.setdefault(snap.get("parent"), []).append(name)
        lines: list[str] = []

        def walk(parent: Any, depth: int) -> None:
            for name in sorted(children.get(parent, []), key=lambda n: ct["snapshots"][n]["snaptime"]):
                snap = ct["snapshots"][name]
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snap["snaptime"]))
                desc = snap.get("description") or "no-description"
                lines.append(f"{' ' * depth}`-> {name:<{28 - depth}} {when}     {desc}")
                walk(name, depth + 1)
                if ct.get("parent") == name:
                    lines.append(f"{' ' * (depth + 1)}`-> {'current':<{27 - depth}} {'':19}     You are here!")

        walk(None, 0)
        if ct.get("parent") is None:
            lines.append(f"`-> {'current':<28} {'':19}     You are here!")
        return Result("\n".join(lines) + "\n")

    async def cmd_migrate(self, args: list[str], stdin: bytes) -> Result:
        """Checks in PVE's order (API2::LXC migrate_vm, then LXC::Migrate prepare); a running
        container moves only in restart mode (shut down, moved, started on the target)."""
        usage = "pct migrate <vmid> <target> [OPTIONS]"
        pos, opts = parse_options(
            args,
            {"restart": "bool", "online": "bool", "target-storage": "str", "timeout": "int", "bwlimit": "int"},
            usage,
        )
        if len(pos) != 2:
            raise ToolError(f"400 not enough arguments\n{usage}")
        vmid, target = check_vmid(pos[0]), pos[1]
        if target == self.model.node:
            raise param_error("target", "target is local node.")
        self._check_quorum()
        if target not in self.model.data["cluster"]["nodes"]:
            raise ToolError(f"no such cluster node '{target}'")
        ct = self._get(vmid)
        running = ct["status"] == "running"
        if running and opts.get("online") != "1" and opts.get("restart") != "1":
            raise ToolError("can't migrate running container without --online or --restart")
        self._check_lock(ct)
        if running and opts.get("online") == "1" and opts.get("restart") != "1":
            raise ToolError("lxc live migration is currently not implemented")
        tstore = opts.get("target-storage")
        if tstore and tstore not in self.model.storages:
            raise ToolError(f"storage '{tstore}' does not exist")
        now = time.strftime("%Y-%m-%d %H:%M:%S")
        if self.model.cluster is not None and target in self.model.cluster.ssh_down:
            # prepare's `ssh <target> /bin/true`, before the restart-mode shutdown; AbstractMigrate
            # logs the error in the task log and dies with "migration aborted"
            why = "Can't connect to destination address using public key"
            raise ToolError("migration aborted", stdout=f"{now} ERROR: migration aborted (duration 00:00:00): {why}\n")
        await self._locked(ct, "migrate")
        address = f"192.0.2.{11 + self.model.data['cluster']['nodes'].index(target)}"
        log = [f"{now} starting migration of CT {vmid} to node '{target}' ({address})"]
        if running:
            log.append(f"{now} shutdown CT {vmid}")
            ct["status"] = "stopped"
        log.append(f"{now} volume '{ct['config']['rootfs'].split(',')[0]}' is migrated to '{target}'")
        self._move(vmid, ct, target)
        if running:
            log.append(f"{now} start final cleanup")
            log.append(f"{now} start container on target node")
            ct["status"] = "running"
            ct["started_at"] = time.time()
        log.append(f"{now} migration finished successfully (duration 00:00:01)")
        self._save_cluster(target)
        return Result("\n".join(log) + "\n")

    def _check_quorum(self) -> None:
        """PVE::Cluster::check_cfs_quorum: what changes the cluster needs a majority of its nodes."""
        if not self.model.quorate():
            raise ToolError(NO_QUORUM)

    def _check_writable(self, vmid: str) -> None:
        """Writing the container's config into /etc/pve (refused without quorum). Called where PVE first
        writes the config, after the command's own checks; nothing has changed yet."""
        refusal = self.model.conf_write_refusal(vmid)
        if refusal is not None:
            raise ToolError(refusal)

    def _check_reservable(self, vmid: str) -> None:
        """A new guest's ID is reserved by creating its empty config in /etc/pve (O_EXCL), read-only without
        quorum; PVE takes any failure of that for another node's reservation."""
        if not self.model.quorate():
            raise ToolError(f"Could not reserve ID {vmid}, already taken")

    def _move(self, vmid: str, ct: Container, target: str) -> None:
        """Hand the container to `target` (its config moves to `nodes/<target>/lxc`)."""
        del self.model.containers[vmid]
        other = self.model.cluster.node(target) if self.model.cluster is not None else None
        if other is None:  # a node this simulator does not run: only its name is known here
            self.model.data.setdefault("remote_nodes", {})[vmid] = target
            return
        other.containers[vmid] = ct

    def _save_cluster(self, target: str) -> None:
        other = self.model.cluster.node(target) if self.model.cluster is not None else None
        if other is not None:
            other.save()
        self.model.save()

    async def cmd_clone(self, args: list[str], stdin: bytes) -> Result:
        usage = "pct clone <vmid> <newid> [OPTIONS]"
        pos, opts = parse_options(
            args,
            {
                "snapname": "str",
                "full": "bool",
                "hostname": "str",
                "storage": "str",
                "pool": "str",
                "bwlimit": "int",
                "target": "str",
                "description": "str",
            },
            usage,
        )
        if len(pos) != 2:
            raise ToolError(f"400 not enough arguments\n{usage}")
        src_id, dst_id = check_vmid(pos[0]), check_vmid(pos[1])
        src = self._get(src_id)
        if int(dst_id) in self.model.all_vmids():
            raise ToolError(f"CT {dst_id} already exists on node '{self.model.node}'")
        snapname = opts.get("snapname")
        if snapname and snapname not in src["snapshots"]:
            raise ToolError(f"snapshot '{snapname}' does not exist")
        is_template = bool(src["config"].get("template"))
        full = opts.get("full", "0" if is_template else "1") == "1"
        if not full and not is_template:
            raise ToolError("linked clone feature is only available for templates")
        if not snapname and src["status"] == "running" and not is_template:
            raise ToolError(f"CT {src_id} is running - unable to clone without a snapshot")
        self._check_quorum()
        base = src["snapshots"][snapname]["config"] if snapname else src["config"]
        config = clone_config(base)
        config.pop("template", None)
        for key in list(config):
            if key.startswith("unused"):
                del config[key]
            elif key == "rootfs" or MP_KEY.match(key):
                volid, vopts = volume_options(str(config[key]))
                storage = opts.get("storage", volid.split(":")[0])
                if storage not in self.model.storages:
                    raise ToolError(f"storage '{storage}' does not exist")
                config[key] = join_volume(self.model.alloc_disk(storage, dst_id), vopts)
            elif NET_KEY.match(key):
                _, nopts = volume_options("x," + str(config[key]))
                nopts["hwaddr"] = random_mac()
                config[key] = ",".join(f"{k}={v}" for k, v in nopts.items())
        if "hostname" in opts:
            config["hostname"] = opts["hostname"]
        if "description" in opts:
            config["description"] = opts["description"]
        ct = self.model.new_container(dst_id, config)
        ct["files"] = dict(src.get("files", {}))
        self.model.save()
        return Result(
            f"create {'full' if full else 'linked'} clone of mountpoint rootfs ({src['config']['rootfs'].split(',')[0]})\n"
        )

    async def cmd_template(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {})
        vmid = check_vmid(pos[0] if pos else "")
        ct = self._get(vmid)
        self._check_lock(ct)
        if ct["status"] == "running":
            raise ToolError("you can't convert a CT to template if the CT is running")
        self._check_writable(vmid)
        ct["config"]["template"] = 1
        self.model.save()
        return Result()

    async def cmd_push(self, args: list[str], stdin: bytes) -> Result:
        usage = "pct push <vmid> <file> <destination> [OPTIONS]"
        pos, _ = parse_options(args, {"perms": "str", "user": "str", "group": "str"}, usage)
        if len(pos) != 3:
            raise ToolError(f"400 not enough arguments\n{usage}")
        vmid, src, dest = check_vmid(pos[0]), pos[1], pos[2]
        ct = self._get(vmid)
        if ct["status"] != "running":
            raise ToolError(f"CT {vmid} not running")
        path = self.model.host_path(src)
        if not path.is_file():
            raise ToolError(f"failed to open {src} for reading")
        if not dest.startswith("/"):
            raise ToolError("destination must be an absolute path")
        ct["files"][dest] = path.read_text(errors="replace")
        unit = re.fullmatch(r"/etc/systemd/system/([A-Za-z0-9@._-]+)\.service", dest)
        if unit:
            ct["services"].setdefault(unit.group(1), "inactive")
        self.model.save()
        return Result()

    async def cmd_pull(self, args: list[str], stdin: bytes) -> Result:
        pos, _ = parse_options(args, {"perms": "str", "user": "str", "group": "str"})
        vmid, src, dest = check_vmid(pos[0]), pos[1], pos[2]
        ct = self._get(vmid)
        if src not in ct["files"]:
            raise ToolError(f"failed to open {src} for reading")
        target = self.model.host_path(dest)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(ct["files"][src])
        return Result()

    async def cmd_exec(self, args: list[str], stdin: bytes) -> Result:
        if "--" in args:
            split = args.index("--")
            head, command = args[:split], args[split + 1 :]
        else:
            head, command = args[:1], args[1:]
        pos, _ = parse_options(head, {"keep-env": "bool"})
        vmid = check_vmid(pos[0] if pos else "")
        ct = self._get(vmid)
        if ct["status"] != "running":
            raise ToolError(f"CT {vmid} not running")
        if not command:
            raise ToolError("missing command")
        result: Result = await self.guest.run(vmid, ct, command, stdin)
        if command[0] not in READ_ONLY_EXEC:
            self.model.save()
        return result

    async def cmd_restore(self, args: list[str], stdin: bytes) -> Result:
        usage = "pct restore <vmid> <ostemplate> [OPTIONS]"
        pos, opts = parse_options(
            args,
            {
                "storage": "str",
                "force": "bool",
                "unique": "bool",
                "start": "bool",
                "unprivileged": "bool",
                "rootfs": "str",
                "pool": "str",
            },
            usage,
        )
        if len(pos) != 2:
            raise ToolError(f"400 not enough arguments\n{usage}")
        vmid, source = check_vmid(pos[0]), pos[1]
        archive_path = self._archive_path(source)
        storage = opts.get("storage", "local")
        if storage not in self.model.storages:
            raise ToolError(f"storage '{storage}' does not exist")
        existing = self.model.containers.get(vmid)
        if existing is not None:
            if opts.get("force") != "1":
                raise ToolError(f"unable to restore CT {vmid} - CT {vmid} already exists on node '{self.model.node}'")
            self._check_lock(existing)
            if existing["status"] == "running":
                raise ToolError(f"unable to restore CT {vmid} - CT is running")
        elif int(vmid) in self.model.all_vmids():
            raise ToolError(f"unable to restore CT {vmid} - CT {vmid} already exists on another node")
        try:
            with tarfile.open(archive_path) as tar:
                member = tar.extractfile("./etc/vzdump/pct.conf")
                conf_text = member.read().decode() if member else ""
        except (tarfile.TarError, KeyError) as exc:
            raise ToolError(f"unable to restore CT {vmid} - unable to read archive '{source}': {exc}") from None
        config: Config = {}
        for line in conf_text.splitlines():
            if ": " in line and not line.startswith("#"):
                k, v = line.split(": ", 1)
                config[k] = int(v) if v.isdigit() else v
        if "rootfs" not in config:
            raise ToolError(f"unable to restore CT {vmid} - archive has no container configuration")
        if storage and "rootdir" not in self.model.storages[storage]["content"]:
            raise ToolError(f"storage '{storage}' does not support container directories")
        # the config is written into /etc/pve: over an existing container (--force) in place, for a new one
        # after reserving its ID; neither without quorum, and nothing has changed yet
        if existing is not None:
            self._check_writable(vmid)
        else:
            self._check_reservable(vmid)
        if existing is not None:
            del self.model.containers[vmid]
        for key in list(config):
            if key == "rootfs" or MP_KEY.match(key):
                _, vopts = volume_options(str(config[key]))
                config[key] = join_volume(self.model.alloc_disk(storage, vmid), vopts)
        ct = self.model.new_container(vmid, config)
        if opts.get("start") == "1":
            ct["status"] = "running"
        self.model.save()
        return Result(
            f"recovering backed-up configuration from '{source}'\n"
            f"restoring '{source}' now..\nTotal bytes read: {archive_path.stat().st_size}\n"
        )

    def _archive_path(self, source: str) -> Path:
        if source.startswith("/"):
            path = self.model.host_path(source)
        else:
            store, _, volname = source.partition(":")
            if store not in self.model.storages or not volname.startswith("backup/"):
                raise ToolError(f"unable to parse volume ID '{source}'")
            path = self.model.host_path("/var/lib/vz/dump/" + volname.split("/", 1)[1])
        if not path.is_file():
            raise ToolError(f"unable to restore - archive '{source}' does not exist")
        return path


def _ostype(volname: str) -> str:
    base = volname.split("/", 1)[-1]
    for name in ("debian", "ubuntu", "alpine", "centos", "fedora", "archlinux"):
        if base.startswith(name):
            return name
    return "unmanaged"


def archive_bytes(vmid: str, config: Config, compress: str) -> bytes:
    """A vzdump-like archive: a tar holding ./etc/vzdump/pct.conf (and a marker)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if compress == "gzip" else "w") as tar:
        conf = "".join(f"{k}: {v}\n" for k, v in sorted(config.items())).encode()
        for name, data in (
            ("./etc/vzdump/pct.conf", conf),
            ("./etc/hostname", f"{config.get('hostname', vmid)}\n".encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
