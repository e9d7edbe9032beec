"""A node's hardware (a simulator setting per node) and `pvesh get /nodes/<node>/status`.

The hardware lives in the node's state (``hardware``: ``cpus``, ``memory_mb``); a node
without it has the default, 16 CPUs and 64 GiB. Everything that tells the node's size
reads it here: ``/nodes/<node>/status``, the node's row of ``/cluster/resources``, the
host's ``/proc/meminfo``, ``free`` and ``nproc``.

``/nodes/<node>/status`` answers as PVE 8 does (`PVE::API2::Nodes::Nodeinfo::status`):
``cpuinfo.cpus`` an integer, ``memory.total/used/free`` integers in bytes, ``loadavg``
three strings, ``uptime`` integer seconds, ``cpu`` and ``wait`` fractions.
"""

from __future__ import annotations

import time
from typing import Any

from .model import NodeModel

DEFAULT_HARDWARE = {"cpus": 16, "memory_mb": 64 * 1024}
HOST_RESERVED_KB = 4_000_000  # what the host itself uses, besides its running guests
SWAP_KB = 8_388_604
LOADAVG = ("0.42", "0.35", "0.30")
ROOTFS_TOTAL = 100 * 1024**3
ROOTFS_USED = 12 * 1024**3
KERNEL = "6.8.12-4-pve"
KERNEL_VERSION = "#1 SMP PREEMPT_DYNAMIC PMX 6.8.12-4 (2024-11-06T15:04Z)"


def hardware(model: NodeModel) -> dict[str, int]:
    """The node's CPUs and memory (MB): its setting, else the default."""
    return {**DEFAULT_HARDWARE, **model.data.get("hardware", {})}


def set_hardware(model: NodeModel, cpus: int, memory_mb: int) -> None:
    if cpus < 1 or memory_mb < 1024:
        raise ValueError("a node needs at least 1 CPU and 1024 MB")
    model.data["hardware"] = {"cpus": cpus, "memory_mb": memory_mb}
    model.save()


def memory_kb(model: NodeModel) -> tuple[int, int]:
    """(total, free) in kB: the host's share and every running guest's allocation are used."""
    total = hardware(model)["memory_mb"] * 1024
    guests = sum(int(c["config"].get("memory", 512)) for c in model.containers.values() if c["status"] == "running")
    return total, max(0, total - HOST_RESERVED_KB - guests * 1024)


def uptime(model: NodeModel) -> float:
    return max(0.0, time.time() - float(model.data.get("boot_time", time.time())))


def node_status(model: NodeModel) -> dict[str, Any]:
    hw = hardware(model)
    total_kb, free_kb = memory_kb(model)
    return {
        "boot-info": {"mode": "efi", "secureboot": 0},
        "cpu": 0.02,
        "cpuinfo": {
            "cores": max(1, hw["cpus"] // 2),
            "cpus": hw["cpus"],
            "flags": "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
            "sse sse2 ht syscall nx lm constant_tsc rep_good nopl cpuid pni ssse3 cx16 sse4_1 sse4_2 popcnt "
            "aes xsave avx hypervisor lahf_lm svm",
            "hvm": "1",
            "mhz": "3399.998",
            "model": "AMD EPYC 7313P 16-Core Processor",
            "sockets": 1,
            "user_hz": 100,
        },
        "current-kernel": {"machine": "x86_64", "release": KERNEL, "sysname": "Linux", "version": KERNEL_VERSION},
        "idle": 0,
        "ksm": {"shared": 0},
        "kversion": f"Linux {KERNEL} {KERNEL_VERSION}",
        "loadavg": list(LOADAVG),
        "memory": {"free": free_kb * 1024, "total": total_kb * 1024, "used": (total_kb - free_kb) * 1024},
        "pveversion": "pve-manager/8.3.0/c1689ccb1065a83b",
        "rootfs": {
            "avail": ROOTFS_TOTAL - ROOTFS_USED,
            "free": ROOTFS_TOTAL - ROOTFS_USED,
            "total": ROOTFS_TOTAL,
            "used": ROOTFS_USED,
        },
        "swap": {"free": SWAP_KB * 1024, "total": SWAP_KB * 1024, "used": 0},
        "uptime": int(uptime(model)),
        "wait": 0.0,
    }
