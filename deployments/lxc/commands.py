"""Request → argv translation: pure functions, one per host command shape.

Values arrive already allow-listed (see `validate`); these functions only put
them in the right place. The SSH layer quotes every word, so each element here
is exactly one argument on the host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

DUMP_DIR = "/var/lib/vz/dump"
TEMPLATE_CACHE = "/var/lib/vz/template/cache"
APPS_DIR = "/opt/lws/apps"
HOST_STATUS_FILES = ("/proc/loadavg", "/proc/meminfo", "/proc/swaps")
ARCHIVE_RE = re.compile(r"creating (?:vzdump )?archive '([^']+)'")


def nextid(candidate: int | None = None) -> list[str]:
    argv = ["pvesh", "get", "/cluster/nextid"]
    return [*argv, "--vmid", str(candidate)] if candidate is not None else argv


def net0(
    bridge: str,
    ip: str | None = None,
    netmask: int = 24,
    gateway: str | None = None,
    dhcp: bool = False,
    rate: str | None = None,
    ipv6: str | None = None,
) -> str:
    """net0 for `pct create`: IPv4 static or dhcp; `ipv6` is `ip6=...[,gw6=...]` when given."""
    value = f"name=eth0,bridge={bridge}"
    if ip and not dhcp:
        value += f",ip={ip}/{netmask}"
        if gateway:
            value += f",gw={gateway}"
    else:
        value += ",ip=dhcp"
    if ipv6:
        value += f",{ipv6}"
    if rate:
        value += f",rate={rate}"
    return value


def pct_create(
    vmid: str,
    image_id: str,
    memory: int,
    cpulimit: str,
    net: str,
    rootfs: str,
    hostname: str | None = None,
    features: str | None = None,
    unprivileged: bool = False,
    nameserver: str | None = None,
) -> list[str]:
    argv = [
        "pct",
        "create",
        vmid,
        image_id,
        "--memory",
        str(memory),
        "--cpulimit",
        cpulimit,
        "--net0",
        net,
        "--rootfs",
        rootfs,
        "--onboot",
        "1",
    ]
    if hostname:
        argv += ["--hostname", f"{hostname}-{vmid}"]
    if features:
        argv += ["--features", features]
    if unprivileged:
        argv += ["--unprivileged", "1"]
    if nameserver:
        argv += ["--nameserver", nameserver]
    return argv


def pct(action: str, vmid: str, *extra: str) -> list[str]:
    return ["pct", action, vmid, *extra]


def pct_exec(vmid: str, words: Sequence[str]) -> list[str]:
    return ["pct", "exec", vmid, "--", *words]


def pct_set(vmid: str, options: dict[str, str]) -> list[str]:
    argv = ["pct", "set", vmid]
    for key, value in options.items():
        argv += [f"--{key}", value]
    return argv


def pvesh(verb: str, path: str, options: dict[str, str] | None = None, json_out: bool = False) -> list[str]:
    argv = ["pvesh", verb, path]
    for key, value in (options or {}).items():
        argv += [f"--{key}", value]
    if json_out:
        argv += ["--output-format", "json"]
    return argv


def vzdump(
    vmid: str, mode: str, compress: str | None = None, storage: str | None = None, dumpdir: str | None = None
) -> list[str]:
    argv = ["vzdump", vmid, "--mode", mode]
    if compress is not None:
        argv += ["--compress", compress]
    if storage:
        argv += ["--storage", storage]
    elif dumpdir:
        argv += ["--dumpdir", dumpdir]
    return argv


def archive_name(log: str) -> str | None:
    match = ARCHIVE_RE.search(log)
    return match.group(1) if match else None


def apt_update() -> list[str]:
    return ["apt-get", "update"]


def apt_dist_upgrade() -> list[str]:
    return [
        "env",
        "DEBIAN_FRONTEND=noninteractive",
        "apt-get",
        "-y",
        "-o",
        "Dpkg::Options::=--force-confdef",
        "-o",
        "Dpkg::Options::=--force-confold",
        "dist-upgrade",
    ]


def cluster_services(verb: str) -> list[str]:
    return ["systemctl", verb, "pve-cluster", "corosync"]


def firewall_rule_options(
    direction: str | None,
    action: str | None,
    proto: str | None,
    sport: str | None,
    dport: str | None,
    source: str | None,
    dest: str | None,
) -> dict[str, str]:
    opts: dict[str, str] = {"enable": "1"}
    for key, value in (
        ("type", direction),
        ("action", action),
        ("proto", proto),
        ("sport", sport),
        ("dport", dport),
        ("source", source),
        ("dest", dest),
    ):
        if value is not None:
            opts[key] = value
    return opts


def compose(vmid: str, app: str, verb: str, *extra: str) -> list[str]:
    return pct_exec(vmid, ["docker", "compose", "-p", app, "-f", f"{APPS_DIR}/{app}/docker-compose.yml", verb, *extra])


def systemd_unit(app: str) -> str:
    """The boot-time unit that brings a compose application up inside the container."""
    path = f"{APPS_DIR}/{app}/docker-compose.yml"
    return (
        "[Unit]\n"
        f"Description=Compose application {app}\n"
        "Requires=docker.service\nAfter=docker.service network-online.target\n\n"
        "[Service]\nType=oneshot\nRemainAfterExit=yes\n"
        f"ExecStart=/usr/bin/docker compose -p {app} -f {path} up -d\n"
        f"ExecStop=/usr/bin/docker compose -p {app} -f {path} down\n\n"
        "[Install]\nWantedBy=multi-user.target\n"
    )
