"""Persistent model of one simulated Proxmox VE node.

The model is a JSON document (``state.json``) plus a real directory tree
(``fs/``) that stands in for the host paths the tools touch: the template
cache, dump directories, ``/var/tmp`` and ``/etc/pve``. Every mutating command
saves the document atomically, and container configurations are materialised
as ``/etc/pve/nodes/<node>/lxc/<vmid>.conf`` so a host-config backup archives
what a real node would.
"""

from __future__ import annotations

import copy
import json
import os
import posixpath
import random
import time
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

TEMPLATE_CACHE = "/var/lib/vz/template/cache"
DUMP_DIR = "/var/lib/vz/dump"

NO_QUORUM = "cluster not ready - no quorum?"
"""PVE::Cluster::check_cfs_quorum's refusal: what changes the cluster (start, migrate, clone) needs quorum."""
CFS_LOCK_TRIES = 9
"""How often PVE::Cluster's cfs_lock says it is trying before its 10 s timeout (once a second)."""

DEFAULT_TEMPLATES = (
    "debian-12-standard_12.7-1_amd64.tar.zst",
    "ubuntu-24.04-standard_24.04-2_amd64.tar.zst",
    "alpine-3.20-default_20240908_amd64.tar.xz",
)


Config = dict[str, Any]
"""A container's configuration: option name → value, as PVE writes it in ``<vmid>.conf``."""


class SnapshotRecord(TypedDict):
    config: Config
    snaptime: int
    description: str
    parent: str | None


class DockerContainer(TypedDict):
    id: str
    image: str
    status: str
    ports: list[dict[str, int]]
    logs: list[str]
    project: str | None
    volumes: NotRequired[list[str]]


class DockerVolume(TypedDict):
    anonymous: bool


class DockerState(TypedDict):
    containers: dict[str, DockerContainer]
    images: list[str]
    volumes: NotRequired[dict[str, DockerVolume]]


class FirewallState(TypedDict):
    options: dict[str, int | str]
    rules: list[dict[str, Any]]


class Container(TypedDict):
    """One container of the node: its configuration and what runs inside it."""

    status: str
    lock: str | None
    config: Config
    snapshots: dict[str, SnapshotRecord]
    parent: str | None
    files: dict[str, str]
    services: dict[str, str]
    packages: list[str]
    docker: DockerState
    tmp_files: dict[str, int]
    disk_used_pct: float
    dns_ok: bool
    listening: list[list[str | int]]
    started_at: float | None
    password_hash: NotRequired[str]
    firewall: NotRequired[FirewallState]
    apt_fresh: NotRequired[bool]
    package_configs: NotRequired[dict[str, bool]]  # removed, conffiles left (dpkg state rc)


def _default_state(node: str) -> dict[str, Any]:
    return {
        "node": node,
        "cluster": {"name": "rayfleet-demo", "nodes": [node, f"{node}2"], "config_version": 3},
        "storages": {
            "local": {
                "type": "dir",
                "content": ["vztmpl", "backup", "iso"],
                "path": "/var/lib/vz",
                "total": 100 * 1024**3,
            },
            "local-lvm": {"type": "lvmthin", "content": ["rootdir", "images"], "total": 200 * 1024**3},
        },
        "containers": {},
        "firewall": {"options": {"enable": 0}, "groups": {}},
        "services": {"pve-cluster": "active", "corosync": "active", "networking": "active"},
        "apt": {"lists_fresh": False, "upgradable": ["pve-manager", "proxmox-kernel-6.8", "libpve-common-perl"]},
        "boot_time": time.time(),
        "remote_nodes": {},
    }


class NodeModel:
    """The node's state, loaded from and saved to ``state_dir``."""

    def __init__(self, state_dir: str | Path, node: str = "pve", cluster: ClusterDoc | None = None) -> None:
        self.dir = Path(state_dir)
        self.fs_root = self.dir / "fs"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "state.json"
        self.cluster = cluster
        if cluster is not None:
            cluster.link_etc_pve(self.host_path("/etc/pve"))
        if self.path.exists():
            self.data: dict[str, Any] = json.loads(self.path.read_text())
        else:
            self.data = _default_state(node)
            self._seed_files()
        if cluster is not None:
            cluster.join(self)
        self.save()

    # ----------------------------------------------------------------- files
    def host_path(self, path: str) -> Path:
        """Map an absolute host path into the fs root, refusing escapes."""
        norm = posixpath.normpath("/" + path.lstrip("/")) if path.startswith("/") else None
        if norm is None:
            raise ValueError(f"relative path not supported: {path}")
        return self.fs_root / norm.lstrip("/")

    def _seed_files(self) -> None:
        cache = self.host_path(TEMPLATE_CACHE)
        cache.mkdir(parents=True, exist_ok=True)
        for size_mb, name in zip((126, 141, 3), DEFAULT_TEMPLATES, strict=False):
            with (cache / name).open("wb") as fh:
                fh.write(b"template " + name.encode() + b"\n")
                fh.truncate(size_mb * 1024**2)
        self.host_path(DUMP_DIR).mkdir(parents=True, exist_ok=True)
        self.host_path("/var/tmp").mkdir(parents=True, exist_ok=True)
        pve = self.host_path("/etc/pve")
        pve.mkdir(parents=True, exist_ok=True)
        (pve / "storage.cfg").write_text(
            "dir: local\n\tpath /var/lib/vz\n\tcontent vztmpl,backup,iso\n\n"
            "lvmthin: local-lvm\n\tthinpool data\n\tvgname pve\n\tcontent rootdir,images\n"
        )
        (pve / "datacenter.cfg").write_text("keyboard: en-us\n")
        (pve / "corosync.conf").write_text("totem {\n  cluster_name: rayfleet-demo\n  version: 2\n}\n")

    # ------------------------------------------------------------ persistence
    def save(self) -> None:
        own = self.data
        if self.cluster is not None:
            own = {k: v for k, v in self.data.items() if k not in self.cluster.shared_keys}
            self.cluster.save()
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(own, indent=1, sort_keys=True))
        os.replace(tmp, self.path)
        self._materialise_configs()

    def _materialise_configs(self) -> None:
        lxc_dir = self.host_path(f"/etc/pve/nodes/{self.node}/lxc")
        lxc_dir.mkdir(parents=True, exist_ok=True)
        wanted = set()
        for vmid, ct in self.containers.items():
            name = f"{vmid}.conf"
            wanted.add(name)
            (lxc_dir / name).write_text(format_conf(ct["config"], ct.get("snapshots", {})))
        for existing in lxc_dir.iterdir():
            if existing.name not in wanted:
                existing.unlink()

    # -------------------------------------------------------------- accessors
    @property
    def node(self) -> str:
        node: str = self.data["node"]
        return node

    @property
    def containers(self) -> dict[str, Container]:
        return cast(dict[str, Container], self.data["containers"])

    @property
    def storages(self) -> dict[str, dict[str, Any]]:
        storages: dict[str, dict[str, Any]] = self.data["storages"]
        return storages

    def conf_path(self, vmid: str) -> str:
        return f"nodes/{self.node}/lxc/{vmid}.conf"

    def quorate(self) -> bool:
        """Whether this node's cluster has quorum (a node outside any cluster always has)."""
        return self.cluster is None or self.cluster.quorate()

    def conf_write_refusal(self, vmid: str) -> str | None:
        """What PVE says when it writes a container's config into /etc/pve without quorum: pmxcfs is then
        read-only, so `PVE::Tools::file_set_contents` cannot open its temporary file (EACCES)."""
        if self.quorate():
            return None
        return f"unable to open file '/etc/pve/{self.conf_path(vmid)}.tmp.{os.getpid()}' - Permission denied"

    def cfs_lock_refusal(self, lockid: str) -> str | None:
        """What PVE::Cluster's cfs_lock says when it cannot take `lockid` (a folder under /etc/pve/priv/lock,
        refused by a read-only pmxcfs): a line a second until its 10 s timeout, then, seeing no quorum,
        `no quorum!` in place of the timeout. The simulator prints the lines without waiting."""
        if self.quorate():
            return None
        trying = f"trying to acquire cfs lock '{lockid}' ...\n" * CFS_LOCK_TRIES
        return f"{trying}cfs-lock '{lockid}' error: no quorum!"

    def all_vmids(self) -> set[int]:
        """Every VMID the cluster uses (one node alone: its own and those it migrated away)."""
        members = self.cluster.members.values() if self.cluster is not None else [self]
        ids: set[int] = set()
        for model in members:
            ids |= {int(v) for v in model.containers}
            ids |= {int(v) for v in model.data.get("remote_nodes", {})}
        return ids

    def next_free_vmid(self) -> int:
        used = self.all_vmids()
        vmid = 100
        while vmid in used:
            vmid += 1
        return vmid

    def new_container(self, vmid: str, config: Config) -> Container:
        ct: Container = {
            "status": "stopped",
            "lock": None,
            "config": config,
            "snapshots": {},
            "parent": None,
            "files": {},
            "services": {"ssh": "active", "cron": "active", "networking": "active"},
            "packages": ["bash", "coreutils", "curl", "openssh-server"],
            "docker": {"containers": {}, "images": []},
            "tmp_files": {"/tmp/old-cache.bin": 40, "/var/tmp/stale.log": 30, "/tmp/fresh.txt": 1},
            "disk_used_pct": 23,
            "dns_ok": True,
            "listening": [["tcp", 22]],
            "started_at": None,
        }
        self.containers[vmid] = ct
        return ct

    def disk_ids_in_use(self) -> set[str]:
        ids: set[str] = set()
        for ct in self.containers.values():
            for key, value in ct["config"].items():
                if key == "rootfs" or key.startswith("mp") or key.startswith("unused"):
                    ids.add(str(value).split(",")[0])
        return ids

    def alloc_disk(self, storage: str, vmid: str) -> str:
        used = self.disk_ids_in_use()
        n = 0
        while f"{storage}:vm-{vmid}-disk-{n}" in used:
            n += 1
        return f"{storage}:vm-{vmid}-disk-{n}"


def random_mac() -> str:
    octets = [0xBC, 0x24, 0x11] + [random.randint(0, 255) for _ in range(3)]
    return ":".join(f"{o:02X}" for o in octets)


def format_conf(config: Config, snapshots: dict[str, SnapshotRecord]) -> str:
    """The on-disk `<vmid>.conf` text: current section, then one per snapshot."""
    lines = [f"{k}: {v}" for k, v in sorted(config.items()) if k != "description"]
    if "description" in config:
        lines.insert(0, "#" + str(config["description"]))
    for name, snap in snapshots.items():
        lines.append("")
        lines.append(f"[{name}]")
        lines.extend(f"{k}: {v}" for k, v in sorted(snap["config"].items()))
        lines.append(f"snaptime: {snap['snaptime']}")
    return "\n".join(lines) + "\n"


def clone_config(config: Config) -> Config:
    return copy.deepcopy(config)


def parse_size(text: str) -> float:
    """Proxmox disk size string (`8G`, `512M`, `1T`, bare number = GiB) → GiB."""
    text = text.strip()
    units = {"K": 1 / 1024**2, "M": 1 / 1024, "G": 1.0, "T": 1024.0}
    if text and text[-1].upper() in units:
        return float(text[:-1]) * units[text[-1].upper()]
    return float(text)


def format_size(gib: float) -> str:
    if gib == int(gib):
        return f"{int(gib)}G"
    return f"{round(gib * 1024)}M"


def volume_options(value: str) -> tuple[str, dict[str, str]]:
    """Split `local-lvm:vm-100-disk-0,size=8G,mp=/data` into volid and options."""
    parts = value.split(",")
    opts: dict[str, str] = {}
    for part in parts[1:]:
        if "=" in part:
            k, v = part.split("=", 1)
            opts[k] = v
    return parts[0], opts


def join_volume(volid: str, opts: dict[str, str]) -> str:
    return ",".join([volid] + [f"{k}={v}" for k, v in opts.items()])


class ClusterDoc:
    """The part of the state every node sees alike, and the nodes that see it."""

    shared_keys = ("cluster", "firewall")

    def __init__(self, root: Path, names: list[str]) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / "cluster.json"
        self.etc_pve = root / "etc-pve"
        self.etc_pve.mkdir(exist_ok=True)
        self.members: dict[str, NodeModel] = {}
        self.offline: set[str] = set()
        """Members corosync no longer sees (their SSH server taken down): runtime, not saved."""
        self.ssh_down: set[str] = set()
        """Members whose SSH server does not listen (powered off, or sshd alone died): runtime, not
        saved. Another node's `ssh <member> /bin/true` (migration's test) fails for them."""
        if self.path.exists():
            self.data: dict[str, Any] = json.loads(self.path.read_text())
        else:
            self.data = {
                "cluster": {"name": "rayfleet-demo", "nodes": list(names), "config_version": len(names)},
                "firewall": {"options": {"enable": 0}, "groups": {}},
            }

    def link_etc_pve(self, path: Path) -> None:
        """A node's `/etc/pve` is the cluster's (what pmxcfs mounts on every node)."""
        if path.is_symlink():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(self.etc_pve.resolve(), target_is_directory=True)

    def join(self, model: NodeModel) -> None:
        for key in self.shared_keys:
            model.data[key] = self.data[key]
        self.members[model.node] = model

    def node(self, name: str) -> NodeModel | None:
        return self.members.get(name)

    def quorate(self) -> bool:
        """Corosync's votes: a majority of the cluster's nodes online (one vote each)."""
        names = self.data["cluster"]["nodes"]
        return 2 * len([name for name in names if name not in self.offline]) > len(names)

    def add_shared_storage(self, name: str, kind: str = "nfs", content: tuple[str, ...] = ("vztmpl", "backup")) -> str:
        """A storage every member mounts at `/mnt/pve/<name>` (one folder under the cluster's root, as
        an NFS export would be): its `shared` flag set, as PVE sets it for network storages."""
        mount = f"/mnt/pve/{name}"
        export = self.root / "shared" / name
        (export / "template" / "cache").mkdir(parents=True, exist_ok=True)
        for member in self.members.values():
            member.storages[name] = {
                "type": kind,
                "content": list(content),
                "path": mount,
                "shared": True,
                "total": 500 * 1024**3,
            }
            local = member.host_path(mount)
            local.parent.mkdir(parents=True, exist_ok=True)
            if not local.is_symlink():
                local.symlink_to(export.resolve(), target_is_directory=True)
            member.save()
        return mount

    def where(self, vmid: str) -> NodeModel | None:
        """The node holding container `vmid`."""
        return next((m for m in self.members.values() if vmid in m.containers), None)

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)
