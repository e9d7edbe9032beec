"""The simulated node: one entry point, `Host.execute(command_line)`.

Command lines are split with `shlex.split`, never handed to a shell; the first
word selects a tool. Tools raise `ToolError` to "die" like the PVE CLIs do.
"""

from __future__ import annotations

import asyncio
import io
import shlex
import shutil
import tarfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from .cli import Log, Result, ToolError, check_vmid, parse_options
from .cluster import cluster_models
from .guest import Guest
from .load import LoadFile
from .model import DUMP_DIR, TEMPLATE_CACHE, NodeModel
from .nodestatus import LOADAVG, SWAP_KB, memory_kb, uptime
from .pct import Pct, archive_bytes
from .pvesh import Pvesh

COMPRESS_EXT = {"0": "tar", "gzip": "tar.gz", "1": "tar.lzo", "lzo": "tar.lzo", "zstd": "tar.zst"}
VZDUMP_OPTIONS = {
    "mode": "str",
    "compress": "str",
    "storage": "str",
    "dumpdir": "str",
    "remove": "bool",
    "notes-template": "str",
    "quiet": "bool",
    "stdout": "bool",
    "all": "bool",
    "node": "str",
}


class Host:
    def __init__(self, model: NodeModel, op_delay: float = 0.0) -> None:
        self.model = model
        self.load_file = LoadFile(model.dir)
        self.guest = Guest(self.load_file.current)
        self.pct = Pct(model, self.guest, op_delay)
        self.pvesh = Pvesh(model)
        self.op_delay = op_delay

    async def execute(self, command: str, stdin: bytes = b"") -> Result:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            return Result("", f"bash: syntax error: {exc}\n", 2)
        if not argv:
            return Result()
        return await self.run_argv(argv, stdin)

    async def run_argv(self, argv: list[str], stdin: bytes = b"") -> Result:
        name = argv[0].rsplit("/", 1)[-1]
        handler: Callable[[list[str], bytes], Awaitable[Result]] | None = getattr(
            self, "t_" + name.replace("-", "_"), None
        )
        if handler is None:
            return Result("", f"bash: line 1: {argv[0]}: command not found\n", 127)
        try:
            return await handler(argv[1:], stdin)
        except ToolError as err:
            return Result(err.stdout, err.message, err.rc)

    # ------------------------------------------------------------ wrappers
    async def t_timeout(self, args: list[str], stdin: bytes) -> Result:
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in ("-k", "-s", "--kill-after", "--signal") else 1
        if i >= len(args) - 1:
            return Result("", "timeout: missing operand\n", 125)
        limit = float(args[i].rstrip("s"))
        try:
            return await asyncio.wait_for(self.run_argv(args[i + 1 :], stdin), limit if limit > 0 else None)
        except TimeoutError:
            return Result("", "", 124)

    async def t_env(self, args: list[str], stdin: bytes) -> Result:
        rest = list(args)
        while rest and "=" in rest[0]:
            rest.pop(0)
        return await self.run_argv(rest, stdin) if rest else Result()

    async def t_sleep(self, args: list[str], stdin: bytes) -> Result:
        await asyncio.sleep(float(args[0]) if args else 0)
        return Result()

    async def t_echo(self, args: list[str], stdin: bytes) -> Result:
        return Result(" ".join(args) + "\n")

    async def t_true(self, args: list[str], stdin: bytes) -> Result:
        return Result()

    async def t_false(self, args: list[str], stdin: bytes) -> Result:
        return Result("", "", 1)

    async def t_whoami(self, args: list[str], stdin: bytes) -> Result:
        return Result("root\n")

    async def t_hostname(self, args: list[str], stdin: bytes) -> Result:
        return Result(f"{self.model.node}\n")

    async def t_uptime(self, args: list[str], stdin: bytes) -> Result:
        return Result(f" {time.strftime('%H:%M:%S')} up 1 day,  1 user,  load average: {', '.join(LOADAVG)}\n")

    # -------------------------------------------------------------- the PVE CLIs
    async def t_pct(self, args: list[str], stdin: bytes) -> Result:
        return await self.pct.run(args, stdin)

    async def t_pvesh(self, args: list[str], stdin: bytes) -> Result:
        return await self.pvesh.run(args, stdin)

    async def t_pveam(self, args: list[str], stdin: bytes) -> Result:
        if not args:
            raise ToolError("ERROR: no command specified\nUSAGE: pveam <COMMAND> [ARGS] [OPTIONS]")
        cache = self.model.host_path(TEMPLATE_CACHE)
        if args[0] == "list":
            pos, _ = parse_options(args[1:], {"content": "str"})
            if not pos or pos[0] not in self.model.storages:
                raise ToolError(f"storage '{pos[0] if pos else ''}' does not exist")
            if "vztmpl" not in self.model.storages[pos[0]]["content"]:
                return Result(f"{'NAME':<60} {'SIZE':<6}\n")
            lines = [f"{'NAME':<60} {'SIZE':<6}"]
            for item in sorted(cache.iterdir()):
                if item.is_file():
                    lines.append(f"{pos[0] + ':vztmpl/' + item.name:<60} {item.stat().st_size / 1024**2:.2f}MB")
            return Result("\n".join(lines) + "\n")
        if args[0] == "remove":
            if len(args) != 2:
                raise ToolError("400 not enough arguments\npveam remove <template_path>")
            store, _, vol = args[1].partition(":")
            if store not in self.model.storages or not vol.startswith("vztmpl/") or "/" in vol[7:]:
                raise ToolError(f"unable to parse volume ID '{args[1]}'")
            target = cache / vol[7:]
            if not target.is_file():
                raise ToolError(f"volume '{args[1]}' does not exist")
            target.unlink()
            return Result(f"Removing {args[1]}\n")
        if args[0] == "available":
            return Result(
                "system          debian-12-standard_12.7-1_amd64.tar.zst\nsystem          ubuntu-24.04-standard_24.04-2_amd64.tar.zst\n"
            )
        if args[0] == "update":
            return Result("update successful\n")
        raise ToolError(f"unknown command 'pveam {args[0]}'")

    async def t_vzdump(self, args: list[str], stdin: bytes) -> Result:
        pos, opts = parse_options(args, VZDUMP_OPTIONS)
        mode, compress, dumpdir = self._vzdump_settings(opts)
        log = Log()
        log.append(f"INFO: starting new backup job: vzdump {' '.join(args)}")
        vmids = [check_vmid(raw) for raw in pos]
        cluster = self.model.cluster
        external = [v for v in vmids if v not in self.model.containers and cluster and cluster.where(v)]
        if external:  # a guest of another node is skipped, and that is not an error (PVE::VZDump)
            log.append(f"INFO: skip external VMs: {', '.join(external)}")
        failed = False
        for vmid in vmids:
            if vmid in external:
                continue
            error = await self._dump_one(vmid, mode, compress, dumpdir, log)
            if error is not None:
                log.append(f"ERROR: Backup of VM {vmid} failed - {error}")
                failed = True
        if not pos:
            raise ToolError("400 Parameter verification failed.\nvmid: property is missing and it is not optional")
        log.append("INFO: Backup job finished with errors" if failed else "INFO: Backup job finished successfully")
        if failed:
            log.append("job errors")
        return Result("", "".join(line + "\n" for line in log), 255 if failed else 0)

    def _vzdump_settings(self, opts: dict[str, str]) -> tuple[str, str, str]:
        """(mode, compress, dump directory) of a vzdump call, refused as PVE refuses them."""
        mode = opts.get("mode", "snapshot")
        if mode not in ("snapshot", "suspend", "stop"):
            raise ToolError(
                f"400 Parameter verification failed.\nmode: value '{mode}' does not have a value in the enumeration 'snapshot, suspend, stop'"
            )
        compress = opts.get("compress", "0")
        if compress not in COMPRESS_EXT:
            raise ToolError(
                f"400 Parameter verification failed.\ncompress: value '{compress}' does not have a value in the enumeration '0, 1, gzip, lzo, zstd'"
            )
        if "storage" in opts and "dumpdir" in opts:
            raise ToolError("400 Parameter verification failed.\ndumpdir: option conflicts with option 'storage'")
        if "storage" not in opts:
            dumpdir = opts.get("dumpdir", DUMP_DIR)
            if not self.model.host_path(dumpdir).is_dir():  # PVE::VZDump::new
                raise ToolError(f"dumpdir '{dumpdir}' does not exist")
            return mode, compress, dumpdir
        storage = self.model.storages.get(opts["storage"])
        if storage is None:
            raise ToolError(
                f"could not get storage information for '{opts['storage']}': storage '{opts['storage']}' does not exist"
            )
        if "backup" not in storage["content"]:
            raise ToolError(f"storage '{opts['storage']}' does not support vzdump backups")
        return mode, compress, DUMP_DIR

    async def _dump_one(self, vmid: str, mode: str, compress: str, dumpdir: str, log: list[str]) -> str | None:
        """Back up one container into `dumpdir`, logging as vzdump does; the failure reason, if any."""
        ct = self.model.containers.get(vmid)
        if ct is None:
            return f"unable to find VM '{vmid}'"
        if ct.get("lock"):
            return f"CT is locked ({ct['lock']})"
        stamp = time.strftime("%Y_%m_%d-%H_%M_%S")
        name = f"vzdump-lxc-{vmid}-{stamp}.{COMPRESS_EXT[compress]}"
        target_dir = self.model.host_path(dumpdir)
        target_dir.mkdir(parents=True, exist_ok=True)
        log.append(f"INFO: Starting Backup of VM {vmid} (lxc)")
        log.append(f"INFO: Backup started at {time.strftime('%Y-%m-%d %H:%M:%S')}")
        log.append(f"INFO: status = {ct['status']}")
        log.append(f"INFO: CT Name: {ct['config'].get('hostname', 'CT' + vmid)}")
        log.append("INFO: including mount point rootfs ('/') in backup")
        log.append(f"INFO: backup mode: {mode}")
        refusal = self.model.conf_write_refusal(vmid)  # the `backup` lock is written into the config first
        if refusal is not None:
            return refusal
        log.append(f"INFO: creating vzdump archive '{dumpdir.rstrip('/')}/{name}'")
        previous = ct["status"]
        lock_wait = self.op_delay
        ct["lock"] = "backup"
        if mode == "stop" and previous == "running":
            ct["status"] = "stopped"
        self.model.save()
        try:
            if lock_wait > 0:
                await asyncio.sleep(lock_wait)
            data = archive_bytes(vmid, ct["config"], compress)
            (target_dir / name).write_bytes(data)
        finally:
            ct["lock"] = None
            ct["status"] = previous
            self.model.save()
        log.append(f"INFO: Total bytes written: {len(data)}")
        log.append(f"INFO: archive file size: {len(data) / 1024:.2f}KB")
        log.append(f"INFO: Finished Backup of VM {vmid} (00:00:01)")
        return None

    async def t_pvecm(self, args: list[str], stdin: bytes) -> Result:
        if args[:1] == ["status"]:
            cluster = self.model.data["cluster"]
            nodes = cluster["nodes"]
            quorate = self.model.data["services"].get("corosync") == "active" and self.model.quorate()
            offline = self.model.cluster.offline if self.model.cluster is not None else set()
            votes = (
                len([n for n in nodes if n not in offline])
                if self.model.data["services"].get("corosync") == "active"
                else 0
            )
            if self.model.data["services"].get("pve-cluster") != "active":
                raise ToolError(
                    "ipcc_send_rec[1] failed: Connection refused\nUnable to load access control list: Connection refused",
                    rc=111,
                )
            lines = [
                "Cluster information",
                "-------------------",
                f"Name:             {cluster['name']}",
                f"Config Version:   {cluster['config_version']}",
                "Transport:        knet",
                "Secure auth:      on",
                "",
                "Quorum information",
                "------------------",
                f"Date:             {time.strftime('%a %b %d %H:%M:%S %Y')}",
                "Quorum provider:  corosync_votequorum",
                f"Nodes:            {votes}",
                "Node ID:          0x00000001",
                "Ring ID:          1.2a",
                f"Quorate:          {'Yes' if quorate else 'No'}",
                "",
                "Votequorum information",
                "----------------------",
                f"Expected votes:   {len(nodes)}",
                "Highest expected: 2",
                f"Total votes:      {votes}",
                f"Quorum:           {len(nodes) // 2 + 1}",
                "Flags:            Quorate" if quorate else "Flags:",
                "",
                "Membership information",
                "----------------------",
                "    Nodeid      Votes Name",
            ]
            for i, n in enumerate(nodes, start=1):
                lines.append(f"0x{i:08x}          1 192.0.2.{10 + i}{' (local)' if n == self.model.node else ''}")
            return Result("\n".join(lines) + "\n")
        if args[:1] == ["nodes"]:
            rows = ["", "Membership information", "----------------------", "    Nodeid      Votes Name"]
            rows += [
                f"{i:>10} {1:>10} {n}{' (local)' if n == self.model.node else ''}"
                for i, n in enumerate(self.model.data["cluster"]["nodes"], start=1)
            ]
            return Result("\n".join(rows) + "\n")
        raise ToolError(f"unknown command 'pvecm {' '.join(args[:1])}'")

    async def t_systemctl(self, args: list[str], stdin: bytes) -> Result:
        words = [a for a in args if not a.startswith("-")]
        if len(words) < 2 or words[0] not in ("start", "stop", "restart", "status", "is-active", "reload"):
            return Result("", f"Unknown command verb '{words[0] if words else ''}'.\n", 1)
        services = self.model.data["services"]
        for unit in words[1:]:
            name = unit.removesuffix(".service")
            if name not in services:
                return Result("", f"Failed to {words[0]} {name}.service: Unit {name}.service not found.\n", 5)
        out = []
        for unit in words[1:]:
            name = unit.removesuffix(".service")
            if words[0] in ("start", "restart", "reload"):
                services[name] = "active"
            elif words[0] == "stop":
                services[name] = "inactive"
            elif words[0] in ("status", "is-active"):
                out.append(
                    f"{services[name]}"
                    if words[0] == "is-active"
                    else f"● {name}.service\n     Active: {services[name]}"
                )
        self.model.save()
        inactive = any(services[w.removesuffix(".service")] != "active" for w in words[1:])
        return Result(
            "\n".join(out) + ("\n" if out else ""), "", 3 if words[0] in ("status", "is-active") and inactive else 0
        )

    async def t_apt_get(self, args: list[str], stdin: bytes) -> Result:
        words = [a for a in args if not a.startswith("-") and not a.startswith("Dpkg::")]
        apt = self.model.data["apt"]
        if words[:1] in (["update"], ["dist-upgrade"], ["upgrade"]) and apt.get("lock_holder"):
            return Result("", _apt_locked(words[0], int(apt["lock_holder"])), 100)
        if words[:1] == ["update"]:
            apt["lists_fresh"] = True
            self.model.save()
            return Result(
                "Hit:1 http://download.proxmox.com/debian/pve bookworm InRelease\n"
                "Hit:2 http://deb.debian.org/debian bookworm InRelease\nReading package lists...\n"
            )
        if words[:1] in (["dist-upgrade"], ["upgrade"]):
            if "-y" not in args and "--yes" not in args and "--assume-yes" not in args:
                return Result("Do you want to continue? [Y/n] Abort.\n", "", 1)
            pkgs = apt["upgradable"]
            apt["upgradable"] = []
            self.model.save()
            return Result(
                "Reading package lists...\nCalculating upgrade...\n"
                f"{len(pkgs)} upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n"
                + "".join(f"Setting up {p} ...\n" for p in pkgs)
            )
        return Result("", "E: Invalid operation " + " ".join(words[:1]) + "\n", 100)

    async def t_reboot(self, args: list[str], stdin: bytes) -> Result:
        self.model.data["boot_time"] = time.time()
        for ct in self.model.containers.values():
            ct["status"] = "running" if ct["config"].get("onboot") else "stopped"
        self.model.save()
        return Result()

    # ------------------------------------------------------------- /proc & fs
    async def t_cat(self, args: list[str], stdin: bytes) -> Result:
        out = []
        for path in args:
            if path == "/proc/loadavg":
                out.append(" ".join(LOADAVG) + " 2/811 123456\n")
            elif path == "/proc/meminfo":
                total, free = memory_kb(self.model)
                out.append(
                    f"MemTotal:       {total} kB\nMemFree:        {free} kB\n"
                    f"MemAvailable:   {free + 1_000_000} kB\nBuffers:          204800 kB\n"
                    f"Cached:          2097152 kB\nSwapTotal:       {SWAP_KB} kB\nSwapFree:        {SWAP_KB} kB\n"
                )
            elif path == "/proc/swaps":
                out.append(
                    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/dm-0                               partition\t8388604\t\t0\t\t-2\n"
                )
            elif path == "/proc/uptime":
                up = uptime(self.model)
                out.append(f"{up:.2f} {up * 1.8:.2f}\n")
            else:
                try:
                    target = self.model.host_path(path)
                except ValueError:
                    target = None
                if target is None or not target.is_file():
                    return Result("".join(out), f"cat: {path}: No such file or directory\n", 1)
                out.append(target.read_text(errors="replace"))
        return Result("".join(out))

    async def t_df(self, args: list[str], stdin: bytes) -> Result:
        return Result(
            "Filesystem            Size  Used Avail Use% Mounted on\n/dev/mapper/pve-root   94G   12G   78G  14% /\n"
        )

    async def t_free(self, args: list[str], stdin: bytes) -> Result:
        total, free = (kb // 1024 for kb in memory_kb(self.model))
        return Result(
            "               total        used        free      shared  buff/cache   available\n"
            f"Mem:    {total:>12} {total - free:>11} {free:>11} {50:>11} {2200:>11} {free + 1000:>11}\n"
            f"Swap:   {SWAP_KB // 1024:>12} {0:>11} {SWAP_KB // 1024:>11}\n"
        )

    def _path(self, path: str) -> Path:
        try:
            return self.model.host_path(path)
        except ValueError:
            raise ToolError(f"{path}: relative paths are not supported here", rc=1) from None

    async def t_ls(self, args: list[str], stdin: bytes) -> Result:
        targets = [a for a in args if not a.startswith("-")] or ["/root"]
        out = []
        for target in targets:
            path = self._path(target)
            if path.is_file():
                out.append(target)
            elif path.is_dir():
                out.extend(sorted(p.name for p in path.iterdir()))
            else:
                return Result("", f"ls: cannot access '{target}': No such file or directory\n", 2)
        return Result("".join(o + "\n" for o in out))

    async def t_mkdir(self, args: list[str], stdin: bytes) -> Result:
        for target in (a for a in args if not a.startswith("-")):
            path = self._path(target)
            if path.exists() and "-p" not in args:
                return Result("", f"mkdir: cannot create directory '{target}': File exists\n", 1)
            path.mkdir(parents="-p" in args, exist_ok="-p" in args)
        return Result()

    async def t_rm(self, args: list[str], stdin: bytes) -> Result:
        force = any(a.startswith("-") and "f" in a for a in args)
        recursive = "--recursive" in args or any(
            a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a) for a in args
        )
        for target in (a for a in args if not a.startswith("-")):
            path = self._path(target)
            if recursive and path == self._path("/"):
                return Result(
                    "",
                    "rm: it is dangerous to operate recursively on '/'\n"
                    "rm: use --no-preserve-root to override this failsafe\n",
                    1,
                )
            if path.is_dir() and not path.is_symlink():
                if not recursive:
                    return Result("", f"rm: cannot remove '{target}': Is a directory\n", 1)
                shutil.rmtree(path)
                continue
            if not path.exists():
                if force:
                    continue
                return Result("", f"rm: cannot remove '{target}': No such file or directory\n", 1)
            path.unlink()
        return Result()

    async def t_rmdir(self, args: list[str], stdin: bytes) -> Result:
        for target in (a for a in args if not a.startswith("-")):
            path = self._path(target)
            if not path.is_dir():
                return Result("", f"rmdir: failed to remove '{target}': No such file or directory\n", 1)
            if any(path.iterdir()):
                return Result("", f"rmdir: failed to remove '{target}': Directory not empty\n", 1)
            path.rmdir()
        return Result()

    async def t_mv(self, args: list[str], stdin: bytes) -> Result:
        words = [a for a in args if not a.startswith("-")]
        if len(words) != 2:
            return Result("", "mv: missing destination file operand\n", 1)
        src, dst = self._path(words[0]), self._path(words[1])
        if not src.exists():
            return Result("", f"mv: cannot stat '{words[0]}': No such file or directory\n", 1)
        if dst.is_dir():
            dst = dst / src.name
        shutil.move(str(src), str(dst))
        return Result()

    async def t_tar(self, args: list[str], stdin: bytes) -> Result:
        if not args or not args[0].lstrip("-").startswith("c") or "f" not in args[0]:
            return Result("", "tar: only -czf ARCHIVE PATH... is supported here\n", 2)
        if len(args) < 3:
            return Result("", "tar: Cowardly refusing to create an empty archive\n", 2)
        archive, sources = self._path(args[1]), args[2:]
        if not archive.parent.is_dir():
            return Result("", f"tar: {args[1]}: Cannot open: No such file or directory\n", 2)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz" if "z" in args[0] else "w") as tar:
            for src in sources:
                path = self._path(src)
                if not path.exists():
                    return Result("", f"tar: {src}: Cannot stat: No such file or directory\n", 2)
                tar.add(str(path), arcname=src.lstrip("/"))
        archive.write_bytes(buf.getvalue())
        return Result("", "tar: Removing leading `/' from member names\n")


def _apt_locked(verb: str, pid: int) -> str:
    """apt 2.6 (Debian 12) when another apt process holds the lock `verb` needs (`apt.lock_holder`)."""
    path = "/var/lib/apt/lists/lock" if verb == "update" else "/var/lib/dpkg/lock-frontend"
    last = (
        "E: Unable to lock directory /var/lib/apt/lists/\n"
        if verb == "update"
        else f"E: Unable to acquire the dpkg frontend lock ({path}), is another process using it?\n"
    )
    return (
        f"E: Could not get lock {path}. It is held by process {pid} (apt-get)\n"
        "N: Be aware that removing the lock file is not a solution and may break your system.\n" + last
    )


def make_host(state_dir: str | Path, node: str = "pve", op_delay: float = 0.0) -> Host:
    return Host(NodeModel(state_dir, node), op_delay)


def make_cluster(state_dir: str | Path, nodes: list[str], op_delay: float = 0.0) -> list[Host]:
    """One host per node of a cluster sharing `state_dir`'s cluster document."""
    return [Host(model, op_delay) for model in cluster_models(state_dir, nodes)]
