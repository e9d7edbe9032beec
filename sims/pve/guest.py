"""Commands run inside a simulated container (`pct exec <vmid> -- ...`).

There is no shell in here, as with `lxc-attach` running an argv: each command
is looked up by name and interpreted against the container's model entry.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable

from .cli import Result
from .docker import Docker
from .load import LoadModel
from .model import Container

OS_RELEASE = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n'
# What `apt-get update` makes findable in a Debian 12 container: the packages our commands name
# (bookworm ships docker.io 20.10 and docker-compose 1.29; docker-compose-v2 is Ubuntu's, the
# plugin and docker-ce are Docker's own repository, so apt cannot locate them here).
BOOKWORM_PACKAGES = frozenset(
    {"bash", "coreutils", "curl", "openssh-server", "docker.io", "docker-compose", "containerd", "runc", "nginx"}
)
SERVICE_ACTIONS = ("start", "stop", "restart", "reload", "status", "enable", "disable", "is-active")


def _ip_of(ct: Container) -> str:
    net0 = str(ct["config"].get("net0", ""))
    for part in net0.split(","):
        if part.startswith("ip="):
            ip = part[3:]
            if ip == "dhcp":
                vmid_hash = int(hashlib.sha1(net0.encode()).hexdigest()[:4], 16)
                return f"10.10.{vmid_hash % 250 + 1}.{vmid_hash // 250 % 250 + 2}"
            return ip.split("/")[0]
    return ""


class Guest:
    """Interpreter for in-container argvs.

    `loads` returns the node's load model (or None): with one, the usage files
    (`/proc/stat`, `/proc/meminfo`, ...) follow the container's demand curve.
    """

    def __init__(self, loads: Callable[[], LoadModel | None] | None = None) -> None:
        self.loads = loads or (lambda: None)

    async def run(self, vmid: str, ct: Container, argv: list[str], stdin: bytes) -> Result:
        name = argv[0].rsplit("/", 1)[-1]
        if name == "env":
            rest = list(argv[1:])
            while rest and "=" in rest[0] and not rest[0].startswith("="):
                rest.pop(0)
            if not rest:
                return Result()
            return await self.run(vmid, ct, rest, stdin)
        handler = getattr(self, "c_" + name.replace("-", "_"), None)
        if handler is None:
            return Result(
                "",
                f'lxc-attach: {vmid}: attach.c: lxc_attach_run_command: Failed to exec "{argv[0]}": No such file or directory\n',
                127,
            )
        result: Result | Awaitable[Result] = (
            handler(vmid, ct, argv[1:], stdin) if name == "chpasswd" else handler(vmid, ct, argv[1:])
        )
        if isinstance(result, Result):
            return result
        return await result

    # ----------------------------------------------------------------- files
    def c_cat(self, vmid: str, ct: Container, args: list[str]) -> Result:
        out: list[str] = []
        for path in args:
            content = self._file(vmid, ct, path)
            if content is None:
                return Result("".join(out), f"cat: {path}: No such file or directory\n", 1)
            out.append(content)
        return Result("".join(out))

    def _file(self, vmid: str, ct: Container, path: str) -> str | None:
        load = self.loads()
        if load is not None and (path != "/proc/meminfo" or load.has(vmid)):
            content = load.file(vmid, ct, path)
            if content is not None:
                return content
        mem_kb = int(ct["config"].get("memory", 512)) * 1024
        swap_kb = int(ct["config"].get("swap", 512)) * 1024
        used_kb = min(mem_kb, 48 * 1024 + 1024 * len(ct["docker"]["containers"]) * 32)
        if path == "/proc/loadavg":
            return "0.08 0.03 0.01 1/74 412\n"
        if path == "/proc/meminfo":
            return (
                f"MemTotal:       {mem_kb:>8} kB\nMemFree:        {mem_kb - used_kb:>8} kB\n"
                f"MemAvailable:   {mem_kb - used_kb:>8} kB\nBuffers:               0 kB\n"
                f"Cached:            {8192:>5} kB\nSwapTotal:      {swap_kb:>8} kB\nSwapFree:       {swap_kb:>8} kB\n"
            )
        if path == "/proc/swaps":
            return "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" + (
                f"none                                    virtual\t\t{swap_kb}\t\t0\t\t0\n" if swap_kb else ""
            )
        if path == "/proc/uptime":
            up = time.time() - (ct.get("started_at") or time.time())
            return f"{up:.2f} {up * 1.9:.2f}\n"
        if path == "/etc/hostname":
            return f"{ct['config'].get('hostname', 'CT' + vmid)}\n"
        if path == "/etc/resolv.conf":
            servers = str(ct["config"].get("nameserver", "1.1.1.1")).split()
            return "".join(f"nameserver {s}\n" for s in servers)
        if path == "/etc/os-release":
            return OS_RELEASE
        found: str | None = ct["files"].get(path)
        return found

    def c_ls(self, vmid: str, ct: Container, args: list[str]) -> Result:
        target = next((a for a in args if not a.startswith("-")), "/")
        prefix = target.rstrip("/") + "/"
        names = sorted({p[len(prefix) :].split("/")[0] for p in ct["files"] if p.startswith(prefix)})
        if not names and target not in ("/", "/tmp", "/opt", "/root"):
            return Result("", f"ls: cannot access '{target}': No such file or directory\n", 2)
        return Result("".join(n + "\n" for n in names))

    def c_find(self, vmid: str, ct: Container, args: list[str]) -> Result:
        roots = [a for a in args if a.startswith("/")]
        age = None
        if "-mtime" in args:
            age = args[args.index("-mtime") + 1]
        delete = "-delete" in args
        hits = []
        for path in sorted(ct["tmp_files"]):
            days = ct["tmp_files"][path]
            if not any(path.startswith(r.rstrip("/") + "/") for r in roots):
                continue
            if age and age.startswith("+") and not days > int(age[1:]):
                continue
            hits.append(path)
        if delete:
            for path in hits:
                del ct["tmp_files"][path]
            if hits:
                ct["disk_used_pct"] = max(5, ct["disk_used_pct"] - 10 * len(hits))
            return Result()
        return Result("".join(p + "\n" for p in hits))

    # ------------------------------------------------------------ resources
    def c_df(self, vmid: str, ct: Container, args: list[str]) -> Result:
        size = str(ct["config"].get("rootfs", "size=8G")).rsplit("size=", 1)[-1]
        total = float(size.rstrip("GMT") or 8)
        used = total * ct["disk_used_pct"] / 100
        volid = str(ct["config"].get("rootfs", "")).split(",")[0].split(":")[-1]
        return Result(
            "Filesystem                        Size  Used Avail Use% Mounted on\n"
            f"/dev/mapper/pve-{volid:<16} {total:>4.1f}G {used:>4.1f}G {total - used:>4.1f}G {ct['disk_used_pct']:>3}% /\n"
        )

    def c_free(self, vmid: str, ct: Container, args: list[str]) -> Result:
        mem = int(ct["config"].get("memory", 512))
        swap = int(ct["config"].get("swap", 512))
        used = min(mem, 48 + 32 * len(ct["docker"]["containers"]))
        return Result(
            "               total        used        free      shared  buff/cache   available\n"
            f"Mem:    {mem:>12} {used:>11} {mem - used:>11} {0:>11} {8:>11} {mem - used:>11}\n"
            f"Swap:   {swap:>12} {0:>11} {swap:>11}\n"
        )

    def c_top(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result(
            f"top - {time.strftime('%H:%M:%S')} up 0 min,  0 user,  load average: 0.08, 0.03, 0.01\n"
            "Tasks:  12 total,   1 running,  11 sleeping,   0 stopped,   0 zombie\n"
            "%Cpu(s):  1.2 us,  0.6 sy,  0.0 ni, 98.2 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\n"
            "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
            "      1 root      20   0  167744  11264   8320 S   0.0   2.1   0:00.41 systemd\n"
        )

    def c_uptime(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result(f" {time.strftime('%H:%M:%S')} up 0 min,  0 users,  load average: 0.08, 0.03, 0.01\n")

    def c_nproc(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result(f"{ct['config'].get('cores', 2)}\n")

    # ---------------------------------------------------------------- network
    def c_hostname(self, vmid: str, ct: Container, args: list[str]) -> Result:
        if "-I" in args:
            return Result(f"{_ip_of(ct)} \n")
        return Result(f"{ct['config'].get('hostname', 'CT' + vmid)}\n")

    def c_ip(self, vmid: str, ct: Container, args: list[str]) -> Result:
        ip = _ip_of(ct)
        return Result(
            "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
            + (
                f"2: eth0    inet {ip}/24 brd {ip.rsplit('.', 1)[0]}.255 scope global eth0\\       valid_lft forever preferred_lft forever\n"
                if ip
                else ""
            )
        )

    def c_getent(self, vmid: str, ct: Container, args: list[str]) -> Result:
        if len(args) != 2 or args[0] not in ("hosts", "ahosts"):
            return Result("", "Unknown database\n", 1)
        if not ct.get("dns_ok", True):
            return Result("", "", 2)
        digest = hashlib.sha1(args[1].encode()).digest()
        return Result(f"93.184.{digest[0]}.{digest[1]}    {args[1]}\n")

    def c_nc(self, vmid: str, ct: Container, args: list[str]) -> Result:
        flags, rest = "", []
        words = iter(args)
        for word in words:
            if word in ("-w", "-s", "-p", "-q", "-i"):
                next(words, None)
            elif word.startswith("-"):
                flags += word[1:]
            else:
                rest.append(word)
        if len(rest) != 2 or not rest[1].isdigit():
            return Result("", "usage: nc [-46CDdFhklNnrStUuvZz] [destination] [port]\n", 1)
        proto = "udp" if "u" in flags else "tcp"
        port = int(rest[1])
        open_ = [proto, port] in [list(x) for x in ct["listening"]] or any(
            p.get("host_port") == port
            for c in ct["docker"]["containers"].values()
            if c["status"] == "running"
            for p in c.get("ports", [])
        )
        if open_:
            return Result("", f"Connection to {rest[0]} {port} port [{proto}/*] succeeded!\n", 0)
        return Result("", f"nc: connect to {rest[0]} port {port} ({proto}) failed: Connection refused\n", 1)

    def c_ss(self, vmid: str, ct: Container, args: list[str]) -> Result:
        lines = ["Netid State  Recv-Q Send-Q Local Address:Port Peer Address:Port"]
        for proto, port in ct["listening"]:
            lines.append(f"{proto:<5} LISTEN 0      128          0.0.0.0:{port:<5}      0.0.0.0:*")
        for c in ct["docker"]["containers"].values():
            if c["status"] == "running":
                for p in c.get("ports", []):
                    lines.append(f"tcp   LISTEN 0      4096         0.0.0.0:{p['host_port']:<5}      0.0.0.0:*")
        return Result("\n".join(lines) + "\n")

    def c_curl(self, vmid: str, ct: Container, args: list[str]) -> Result:
        urls, words = [], iter(args)
        for word in words:
            if word in ("--max-time", "-m", "-o", "--connect-timeout", "-H", "-A"):
                next(words, None)
            elif not word.startswith("-"):
                urls.append(word)
        if not urls:
            return Result("", "curl: no URL specified!\n", 2)
        if not ct.get("dns_ok", True):
            return Result("", f"curl: (6) Could not resolve host: {urls[0]}\n", 6)
        if "ifconfig" in urls[0] or "ipify" in urls[0] or "icanhazip" in urls[0]:
            return Result("203.0.113.47\n")
        return Result(
            "", f"curl: (7) Failed to connect to {urls[0]} port 80 after 3 ms: Couldn't connect to server\n", 7
        )

    # ---------------------------------------------------------------- services
    def c_systemctl(self, vmid: str, ct: Container, args: list[str]) -> Result:
        words = [a for a in args if not a.startswith("-")]
        if len(words) < 2 or words[0] not in (*SERVICE_ACTIONS, "daemon-reload"):
            if words and words[0] == "daemon-reload":
                return Result()
            return Result("", f"Unknown command verb '{words[0] if words else ''}'.\n", 1)
        action, units = words[0], words[1:]
        for unit in units:
            name = unit.removesuffix(".service")
            if name not in ct["services"]:
                if action in ("status", "is-active"):
                    return Result("", f"Unit {name}.service could not be found.\n", 4)
                return Result("", f"Failed to {action} {name}.service: Unit {name}.service not found.\n", 5)
            if action in ("start", "restart", "reload"):
                ct["services"][name] = "active"
                if name == "networking":
                    ct["dns_ok"] = True
            elif action == "stop":
                ct["services"][name] = "inactive"
            elif action == "status":
                state = ct["services"][name]
                return Result(
                    f"● {name}.service\n     Loaded: loaded (/lib/systemd/system/{name}.service; enabled)\n"
                    f"     Active: {state} ({'running' if state == 'active' else 'dead'})\n",
                    "",
                    0 if state == "active" else 3,
                )
            elif action == "is-active":
                state = ct["services"][name]
                return Result(state + "\n", "", 0 if state == "active" else 3)
            elif action == "enable":
                return Result(
                    "",
                    f"Created symlink /etc/systemd/system/multi-user.target.wants/{name}.service → /lib/systemd/system/{name}.service.\n",
                )
        return Result()

    def c_apt_get(self, vmid: str, ct: Container, args: list[str]) -> Result:
        words = [a for a in args if not a.startswith("-") and a not in ("Dpkg::Options::=--force-confdef",)]
        if not words:
            return Result("", "E: Invalid operation\n", 100)
        op, pkgs = words[0], words[1:]
        if op == "update":
            ct["apt_fresh"] = True
            return Result("Hit:1 http://deb.debian.org/debian bookworm InRelease\nReading package lists...\n")
        if op == "install":
            return self._apt_install(ct, pkgs)
        if op in ("remove", "purge"):
            return self._apt_remove(ct, pkgs, purge=op == "purge")
        if op in ("upgrade", "dist-upgrade"):
            return Result("Reading package lists...\n0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n")
        return Result("", f"E: Invalid operation {op}\n", 100)

    @staticmethod
    def _unknown(ct: Container, pkgs: list[str]) -> str | None:
        """The first package apt cannot find: not installed and not in the package lists
        (empty until `apt-get update`; Debian 12's archive has no docker-compose-v2)."""
        for pkg in pkgs:
            if pkg in ct["packages"]:
                continue
            if not ct.get("apt_fresh") or pkg not in BOOKWORM_PACKAGES:
                return pkg
        return None

    def _apt_install(self, ct: Container, pkgs: list[str]) -> Result:
        missing = self._unknown(ct, pkgs)
        if missing is not None:
            return Result("Reading package lists...\n", f"E: Unable to locate package {missing}\n", 100)
        for pkg in pkgs:
            if pkg not in ct["packages"]:
                ct["packages"].append(pkg)
            ct.setdefault("package_configs", {}).pop(pkg, None)
            if pkg == "docker.io":
                ct["services"]["docker"] = "active"
        return Result("Reading package lists...\nSetting up " + ", ".join(pkgs) + " ...\n")

    def _apt_remove(self, ct: Container, pkgs: list[str], purge: bool) -> Result:
        """As apt on Debian 12: an unknown package fails the whole command (100, nothing removed);
        a known one that is not installed is only noted; `remove` leaves conffiles (rc state)."""
        missing = self._unknown(ct, pkgs)
        if missing is not None:
            return Result("Reading package lists...\n", f"E: Unable to locate package {missing}\n", 100)
        lines = ["Reading package lists..."]
        removed = []
        configs: dict[str, bool] = ct.setdefault("package_configs", {})
        for pkg in pkgs:
            if pkg in ct["packages"]:
                ct["packages"].remove(pkg)
                removed.append(pkg)
                if purge:
                    configs.pop(pkg, None)
                else:
                    configs[pkg] = True
                if pkg == "docker.io":
                    ct["services"].pop("docker", None)
            elif purge and configs.pop(pkg, False):
                removed.append(pkg)
            else:
                lines.append(f"Package '{pkg}' is not installed, so not removed")
        verb = "Purging configuration files for" if purge else "Removing"
        lines += [f"{verb} {pkg} ..." for pkg in removed]
        lines.append(f"0 upgraded, 0 newly installed, {len(removed)} to remove and 0 not upgraded.")
        return Result("\n".join(lines) + "\n")

    def c_dpkg_query(self, vmid: str, ct: Container, args: list[str]) -> Result:
        """`dpkg-query -W [-f FORMAT] PKG...`: ${Package}, ${Version} and ${Status} per package dpkg
        knows (installed, or removed with its conffiles left); exit 1 when one is unknown."""
        if not args or args[0] not in ("-W", "--show"):
            return Result("", "dpkg-query: error: need an action option\n", 2)
        rest = args[1:]
        fmt = "${Package}\t${Version}\n"
        if rest[:1] == ["-f"] and len(rest) > 1:
            fmt, rest = rest[1], rest[2:]
        elif rest and rest[0].startswith("--showformat="):
            fmt, rest = rest[0].partition("=")[2], rest[1:]
        out, err = [], []
        configs = ct.get("package_configs", {})
        for pkg in rest:
            if pkg in ct["packages"]:
                status = "install ok installed"
            elif pkg in configs:
                status = "deinstall ok config-files"
            else:
                err.append(f"dpkg-query: no packages found matching {pkg}")
                continue
            out.append(
                fmt.replace("${Package}", pkg)
                .replace("${Version}", "1.0")
                .replace("${Status}", status)
                .replace("\\n", "\n")
            )
        return Result("".join(out), "".join(line + "\n" for line in err), 1 if err else 0)

    def c_apt(self, vmid: str, ct: Container, args: list[str]) -> Result:
        if args[:2] == ["list", "--upgradable"]:
            return Result(
                "Listing...\nopenssl/stable-security 3.0.15-1~deb12u1 amd64 [upgradable from: 3.0.14-1~deb12u2]\n",
                "\nWARNING: apt does not have a stable CLI interface. Use with caution in scripts.\n\n",
            )
        return self.c_apt_get(vmid, ct, args)

    def c_dpkg(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result("".join(f"ii  {p:<30} 1.0  amd64  {p}\n" for p in sorted(ct["packages"])))

    # ------------------------------------------------------------------ misc
    def c_chpasswd(self, vmid: str, ct: Container, args: list[str], stdin: bytes = b"") -> Result:
        line = stdin.decode(errors="replace").strip()
        user, sep, password = line.partition(":")
        if not sep or not user or not password:
            return Result("", "chpasswd: line 1: missing new password\n", 1)
        ct["password_hash"] = hashlib.sha256(password.encode()).hexdigest()
        return Result()

    def c_echo(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result(" ".join(args) + "\n")

    def c_true(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result()

    def c_false(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result("", "", 1)

    def c_whoami(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result("root\n")

    def c_uname(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result("Linux 6.8.12-4-pve\n" if "-r" not in args else "6.8.12-4-pve\n")

    def c_mkdir(self, vmid: str, ct: Container, args: list[str]) -> Result:
        return Result()

    def c_rm(self, vmid: str, ct: Container, args: list[str]) -> Result:
        for path in (a for a in args if not a.startswith("-")):
            if ct["files"].pop(path, None) is None and "-f" not in args and "-rf" not in args:
                return Result("", f"rm: cannot remove '{path}': No such file or directory\n", 1)
        return Result()

    async def c_sleep(self, vmid: str, ct: Container, args: list[str]) -> Result:
        await asyncio.sleep(float(args[0]) if args else 0)
        return Result()

    # ---------------------------------------------------------------- docker
    def c_docker(self, vmid: str, ct: Container, args: list[str]) -> Result:
        if "docker.io" not in ct["packages"]:
            return Result(
                "",
                f'lxc-attach: {vmid}: attach.c: lxc_attach_run_command: Failed to exec "docker": No such file or directory\n',
                127,
            )
        return Docker(ct).run(args)
