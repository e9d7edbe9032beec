"""Request → argv translation and the remote command line."""

from __future__ import annotations

import shlex

from deployments.lxc import commands as cmd
from rayfleet.ssh import command_line


def test_pct_create_argv_matches_the_anchor_shape():
    argv = cmd.pct_create(
        "105",
        "local:vztmpl/debian.tar.zst",
        512,
        "1",
        cmd.net0("vmbr0", dhcp=True),
        "local-lvm:8",
        hostname="web",
        features="nesting=1",
        unprivileged=True,
        nameserver="1.1.1.1 8.8.8.8",
    )
    assert argv == [
        "pct",
        "create",
        "105",
        "local:vztmpl/debian.tar.zst",
        "--memory",
        "512",
        "--cpulimit",
        "1",
        "--net0",
        "name=eth0,bridge=vmbr0,ip=dhcp",
        "--rootfs",
        "local-lvm:8",
        "--onboot",
        "1",
        "--hostname",
        "web-105",
        "--features",
        "nesting=1",
        "--unprivileged",
        "1",
        "--nameserver",
        "1.1.1.1 8.8.8.8",
    ]


def test_net0_static_and_rate():
    assert cmd.net0("vmbr0", "10.0.0.5", 24, "10.0.0.1") == "name=eth0,bridge=vmbr0,ip=10.0.0.5/24,gw=10.0.0.1"
    assert cmd.net0("vmbr0", rate="10").endswith(",ip=dhcp,rate=10")


def test_vzdump_and_archive_name():
    assert cmd.vzdump("100", "snapshot", "zstd", dumpdir="/var/lib/vz/dump") == [
        "vzdump",
        "100",
        "--mode",
        "snapshot",
        "--compress",
        "zstd",
        "--dumpdir",
        "/var/lib/vz/dump",
    ]
    assert cmd.vzdump("100", "stop", storage="local") == ["vzdump", "100", "--mode", "stop", "--storage", "local"]
    log = "INFO: creating vzdump archive '/var/lib/vz/dump/vzdump-lxc-100-2024_01_01-00_00_00.tar.zst'\n"
    assert cmd.archive_name(log) == "/var/lib/vz/dump/vzdump-lxc-100-2024_01_01-00_00_00.tar.zst"


def test_apt_and_cluster_and_compose():
    assert cmd.apt_dist_upgrade()[:4] == ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-y"]
    assert cmd.cluster_services("restart") == ["systemctl", "restart", "pve-cluster", "corosync"]
    assert cmd.compose("101", "web", "up", "-d") == [
        "pct",
        "exec",
        "101",
        "--",
        "docker",
        "compose",
        "-p",
        "web",
        "-f",
        "/opt/lws/apps/web/docker-compose.yml",
        "up",
        "-d",
    ]


def test_command_line_quotes_every_word_and_wraps_timeout():
    hostile = ["pct", "exec", "100", "--", "echo", "$(reboot)", "a b", "x;y", "'q'"]
    line = command_line(hostile, 30)
    assert line.startswith("timeout -k 5 30 ")
    assert shlex.split(line)[4:] == hostile
    assert command_line(["hostname"], None) == "hostname"


def test_firewall_rule_options_skip_unset_fields():
    assert cmd.firewall_rule_options("in", "ACCEPT", "tcp", None, "80", None, "10.0.0.0/8") == {
        "enable": "1",
        "type": "in",
        "action": "ACCEPT",
        "proto": "tcp",
        "dport": "80",
        "dest": "10.0.0.0/8",
    }
