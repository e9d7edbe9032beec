"""Read-mostly inspection of containers: storage, info, checks, reports, security scans."""

from __future__ import annotations

import asyncio
import re

from . import commands as cmd
from . import pve
from .config import LxcConfig
from .errors import CommandFailed, NodeDown
from .hosts import Target
from .responses import (
    Discovered,
    HealthCheck,
    Info,
    Listening,
    NetCheck,
    Report,
    Resources,
    ScaleCheck,
    SecurityScan,
)
from .service import HostResult, R

DNS_PROBE = "one.one.one.one"


async def _exec(t: Target, vmid: str, words: list[str]) -> str:
    result = await t.run(cmd.pct_exec(vmid, words))
    if not result.ok:
        raise CommandFailed(result.stderr, result.stdout, result.rc)
    return result.stdout


async def storage(t: Target, vmid: str) -> HostResult:
    return R(await _exec(t, vmid, ["df", "-h"]))


def _disk_percent(df_text: str) -> int | None:
    for line in df_text.splitlines()[1:]:
        match = re.search(r"(\d+)%\s+/\s*$", line)
        if match:
            return int(match.group(1))
    return None


async def _current(t: Target, vmid: str) -> pve.ContainerStatus:
    return await pve.status(t.steps(), await t.node(vmid), vmid)


async def scale_check(t: Target, config: LxcConfig, vmid: str) -> ScaleCheck:
    node = await t.node(vmid)
    current, cfg = await asyncio.gather(_current(t, vmid), pve.config(t.steps(), node, vmid))
    s = config.scaling
    cpu = float(current.get("cpu", 0)) * 100
    mem = 100 * current.get("mem", 0) / current["maxmem"] if current.get("maxmem") else 0.0
    disk = 100 * current.get("disk", 0) / current["maxdisk"] if current.get("maxdisk") else 0.0
    cores = int(cfg.get("cores", current.get("cpus", 1)))
    memory = int(cfg.get("memory", 512))
    recs: list[str] = []
    if current.get("status") != "running":
        recs.append("container is not running; usage figures are zero")
    if cpu > s.cpu_high and cores < s.max_cores:
        recs.append(f"add a CPU core (usage {cpu:.0f}% > {s.cpu_high:.0f}%): cpucores {cores + 1}")
    elif cpu < s.cpu_low and cores > 1 and current.get("status") == "running":
        recs.append(f"CPU usage {cpu:.0f}% < {s.cpu_low:.0f}%: {cores - 1} core(s) would do")
    if mem > s.memory_high and memory < s.max_memory_mb:
        recs.append(f"add memory (usage {mem:.0f}% > {s.memory_high:.0f}%): memory {min(s.max_memory_mb, memory * 2)}")
    elif mem < s.memory_low and memory > 256 and current.get("status") == "running":
        recs.append(f"memory usage {mem:.0f}% < {s.memory_low:.0f}%: {max(256, memory // 2)} MB would do")
    if disk > s.storage_high:
        recs.append(f"grow the root disk (usage {disk:.0f}% > {s.storage_high:.0f}%): storage_size +8G")
    return ScaleCheck(
        instance_id=vmid,
        status=current.get("status"),
        usage={"cpu_percent": round(cpu, 1), "memory_percent": round(mem, 1), "disk_percent": round(disk, 1)},
        current={"cores": cores, "memory_mb": memory},
        thresholds=s.model_dump(),
        recommendations=recs or ["no change needed"],
    )


async def net_check(t: Target, vmid: str, protocol: str, port: int) -> NetCheck:
    flags = "-zvu" if protocol == "udp" else "-zv"
    result = await t.run(cmd.pct_exec(vmid, ["nc", flags, "-w", "3", "127.0.0.1", str(port)]))
    if result.rc not in (0, 1):
        raise CommandFailed(result.stderr, result.stdout, result.rc)
    return NetCheck(
        instance_id=vmid,
        protocol=protocol,
        port=port,
        open=result.rc == 0,
        output=(result.stdout + result.stderr).strip(),
    )


async def info(t: Target, vmid: str) -> Info:
    ips, name, resolv, node = await asyncio.gather(
        _exec(t, vmid, ["hostname", "-I"]),
        _exec(t, vmid, ["hostname"]),
        _exec(t, vmid, ["cat", "/etc/resolv.conf"]),
        t.node(vmid),
    )
    dns = [line.split()[1] for line in resolv.splitlines() if line.startswith("nameserver ") and len(line.split()) > 1]
    return Info(instance_id=vmid, ip_addresses=ips.split(), hostname=name.strip(), dns_servers=dns, host_node=node)


async def public_ip(t: Target, vmid: str) -> HostResult:
    return R(await _exec(t, vmid, ["curl", "-s", "--max-time", "10", "https://ifconfig.io"]))


async def health_check(t: Target, vmid: str, fix: bool) -> HealthCheck:
    status = await t.run(cmd.pct("status", vmid))
    if not status.ok:
        raise CommandFailed(status.stderr, status.stdout, status.rc)
    if "running" not in status.stdout:
        return HealthCheck(instance_id=vmid, healthy=False, checks={"running": False}, actions=[])
    checks: dict[str, bool | int | None] = {"running": True}
    actions: list[str] = []
    disk_pct = _disk_percent(await _exec(t, vmid, ["df", "-h", "/"]))
    dns = await t.run(cmd.pct_exec(vmid, ["getent", "hosts", DNS_PROBE]))
    checks["disk_percent"] = disk_pct
    checks["dns"] = dns.ok
    if fix and disk_pct is not None and disk_pct > 80:
        await _exec(t, vmid, ["find", "/tmp", "/var/tmp", "-type", "f", "-mtime", "+7", "-delete"])
        actions.append("deleted files older than 7 days in /tmp and /var/tmp")
        checks["disk_percent"] = _disk_percent(await _exec(t, vmid, ["df", "-h", "/"]))
    if fix and not dns.ok:
        await _exec(t, vmid, ["systemctl", "restart", "networking"])
        actions.append("restarted networking")
        checks["dns"] = (await t.run(cmd.pct_exec(vmid, ["getent", "hosts", DNS_PROBE]))).ok
    healthy = bool(checks["dns"]) and (checks["disk_percent"] is None or checks["disk_percent"] <= 80)
    return HealthCheck(instance_id=vmid, healthy=healthy, checks=checks, actions=actions)


async def resources(t: Target, vmid: str) -> Resources:
    current = await _current(t, vmid)
    out: dict[str, object] = {
        "instance_id": vmid,
        "status": current.get("status"),
        "cpu": current.get("cpu"),
        "cpus": current.get("cpus"),
        "mem": current.get("mem"),
        "maxmem": current.get("maxmem"),
        "swap": current.get("swap", 0),
        "maxswap": current.get("maxswap"),
        "disk": current.get("disk"),
        "maxdisk": current.get("maxdisk"),
        "netin": current.get("netin"),
        "netout": current.get("netout"),
        "uptime": current.get("uptime"),
    }
    if current.get("status") == "running":
        out["free"] = (await _exec(t, vmid, ["free", "-m"])).strip()
    return Resources.model_validate(out)


async def report(t: Target, config: LxcConfig, vmid: str) -> Report:
    node = await t.node(vmid)
    cfg, current, snaps = await asyncio.gather(
        pve.config(t.steps(), node, vmid), _current(t, vmid), pve.snapshots(t.steps(), node, vmid)
    )
    body: dict[str, object] = {
        "instance_id": vmid,
        "node": node,
        "config": cfg,
        "status": current,
        "snapshots": [s for s in snaps if s.get("name") != "current"],
    }
    if current.get("status") == "running":
        df, free, top, listening = await asyncio.gather(
            _exec(t, vmid, ["df", "-h"]),
            _exec(t, vmid, ["free", "-m"]),
            _exec(t, vmid, ["top", "-bn1"]),
            _exec(t, vmid, ["ss", "-tuln"]),
        )
        body.update(disk=df.strip(), memory=free.strip(), processes=top.strip(), listening=_listening(listening))
        body["scale_check"] = await scale_check(t, config, vmid)
    return Report.model_validate(body)


def _listening(ss_text: str) -> list[Listening]:
    rows = []
    for line in ss_text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 5 and ":" in parts[4]:
            address, _, port = parts[4].rpartition(":")
            if port.isdigit():
                rows.append(Listening(protocol=parts[0], address=address, port=int(port)))
    return rows


async def discovery(t: Target, vmid: str | None) -> list[Discovered]:
    node = await t.node(vmid)
    listing = await (pve.cluster_containers(t.steps()) if t.cluster else pve.containers(t.steps(), node))
    rows = [c for c in listing if vmid is None or str(c["vmid"]) == vmid]
    if vmid is not None and not rows:
        raise CommandFailed(f"Configuration file 'nodes/{node}/lxc/{vmid}.conf' does not exist", "", 255)

    async def one(c: pve.ContainerEntry) -> Discovered:
        entry = Discovered(instance_id=str(c["vmid"]), name=c.get("name"), status=c.get("status"))
        if c.get("status") == "running":
            try:
                entry.listening = _listening(await _exec(t, str(c["vmid"]), ["ss", "-tuln"]))
            except NodeDown as exc:  # the other nodes' containers are still reported
                entry.error = exc.details
        return entry

    return list(await asyncio.gather(*(one(c) for c in rows)))


async def security_scan(t: Target, vmid: str, scan_type: str) -> SecurityScan:
    listening = _listening(await _exec(t, vmid, ["ss", "-tuln"]))
    body = SecurityScan(instance_id=vmid, scan_type=scan_type, listening=listening, findings=[])
    findings = [
        f"port {p.port}/{p.protocol} listens on all addresses"
        for p in listening
        if p.address in ("0.0.0.0", "*", "[::]")
    ]
    if scan_type == "full":
        upgradable, os_release = await asyncio.gather(
            _exec(t, vmid, ["apt", "list", "--upgradable"]), _exec(t, vmid, ["cat", "/etc/os-release"])
        )
        pending = [line.split("/")[0] for line in upgradable.splitlines() if "/" in line]
        body.pending_updates = pending
        body.os = next(
            (line.split("=", 1)[1].strip('"') for line in os_release.splitlines() if line.startswith("PRETTY_NAME=")),
            None,
        )
        findings += [f"package {p} has a pending update" for p in pending]
    body.findings = findings
    return body
