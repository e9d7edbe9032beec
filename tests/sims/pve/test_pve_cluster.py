"""A three-node pve-sim cluster over real SSH: one cluster state, a port per node, real migration."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import asyncssh
import pytest

from sims.pve.nodestatus import set_hardware
from tests.sims.pve.simenv import TEMPLATE, SimEnv, own_sim

NODES = ["pve1", "pve2", "pve3"]
CREATE = f"pct create {{vmid}} {TEMPLATE} --memory 512 --rootfs local-lvm:8 --hostname web-{{vmid}}"
Run = Callable[[str, str], Awaitable[asyncssh.SSHCompletedProcess]]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SimEnv]:
    yield from own_sim(SimEnv, tmp_path, NODES)


@pytest.fixture
async def on(cluster: SimEnv) -> AsyncIterator[Run]:
    """`await on(node, line)`: the line run over SSH on that node's own port."""
    conns = {node: await cluster.connect(node) for node in NODES}

    async def run(node: str, line: str) -> asyncssh.SSHCompletedProcess:
        return await conns[node].run(line)

    yield run
    for conn in conns.values():
        conn.close()


async def _resources(on: Run, node: str) -> list[dict]:
    result = await on(node, "pvesh get /cluster/resources --type vm --output-format json")
    assert result.exit_status == 0, result.stderr
    return json.loads(str(result.stdout))


async def test_each_node_is_its_own_ssh_host_with_its_own_name_and_host_key(cluster, on):
    assert len(set(cluster.ports.values())) == 3
    for node in NODES:
        assert (await on(node, "hostname")).stdout == f"{node}\n"
    keys = {p.read_bytes() for p in cluster.sim.host_keys.values()}
    assert len(keys) == 3


async def test_cluster_resources_list_every_nodes_containers_from_any_node(on):
    assert (await on("pve1", CREATE.format(vmid=100))).exit_status == 0
    assert (await on("pve2", CREATE.format(vmid=101))).exit_status == 0
    assert (await on("pve3", "pct start 101")).exit_status == 255  # 101 lives on pve2
    for node in NODES:
        rows = await _resources(on, node)
        assert [(r["id"], r["node"], r["type"], r["vmid"]) for r in rows] == [
            ("lxc/100", "pve1", "lxc", 100),
            ("lxc/101", "pve2", "lxc", 101),
        ]
        for row in rows:
            assert {"name", "status", "maxcpu", "maxmem", "mem", "maxdisk", "disk", "uptime", "template"} <= set(row)
    everything = json.loads((await on("pve3", "pvesh get /cluster/resources --output-format json")).stdout)
    assert {r["id"] for r in everything if r["type"] == "node"} == {"node/pve1", "node/pve2", "node/pve3"}
    assert "storage/pve2/local-lvm" in {r["id"] for r in everything if r["type"] == "storage"}
    bad = await on("pve1", "pvesh get /cluster/resources --type lxc")
    assert bad.exit_status == 255
    assert bad.stderr == (
        "400 Parameter verification failed.\ntype: value 'lxc' does not have a value in the enumeration "
        "'vm, storage, node, sdn'\n"
    )


async def test_cluster_status_names_the_cluster_and_marks_the_local_node(on):
    rows = json.loads((await on("pve2", "pvesh get /cluster/status --output-format json")).stdout)
    assert rows[0] == {
        "id": "cluster",
        "type": "cluster",
        "name": "rayfleet-demo",
        "nodes": 3,
        "quorate": 1,
        "version": 3,
    }
    nodes = {r["name"]: r for r in rows[1:]}
    assert set(nodes) == set(NODES)
    assert [n for n, r in nodes.items() if r["local"]] == ["pve2"]
    assert all(r["online"] == 1 and r["type"] == "node" and r["id"] == f"node/{n}" for n, r in nodes.items())
    assert sorted(r["nodeid"] for r in nodes.values()) == [1, 2, 3]


async def test_pct_refuses_a_container_that_lives_on_another_node(on):
    await on("pve1", CREATE.format(vmid=100))
    for line in ("pct config 100", "pct start 100", "pct destroy 100"):
        result = await on("pve2", line)
        assert result.exit_status == 255
        assert result.stderr == "Configuration file 'nodes/pve2/lxc/100.conf' does not exist\n"
    assert "100" in (await on("pve1", "pct list")).stdout
    assert "100" not in (await on("pve2", "pct list")).stdout


async def test_vmids_are_cluster_wide(on):
    await on("pve1", CREATE.format(vmid=100))
    assert (await on("pve3", "pvesh get /cluster/nextid")).stdout == "101\n"
    taken = await on("pve3", CREATE.format(vmid=100))
    assert taken.exit_status == 255 and "already exists" in taken.stderr


async def test_pvesh_reaches_a_container_on_another_node(on):
    await on("pve2", CREATE.format(vmid=100))
    config = await on("pve1", "pvesh get /nodes/pve2/lxc/100/config --output-format json")
    assert config.exit_status == 0 and json.loads(config.stdout)["hostname"] == "web-100"
    wrong = await on("pve1", "pvesh get /nodes/pve3/lxc/100/config --output-format json")
    assert wrong.stderr == "Configuration file 'nodes/pve3/lxc/100.conf' does not exist\n"


async def test_migrate_moves_config_and_state_to_the_target_node(cluster, on):
    await on("pve1", CREATE.format(vmid=100))
    await on("pve1", "pct snapshot 100 before")
    moved = await on("pve1", "pct migrate 100 pve3")
    assert moved.exit_status == 0, moved.stderr
    assert "migration finished successfully" in moved.stdout
    assert (
        await on("pve1", "pct config 100")
    ).stderr == "Configuration file 'nodes/pve1/lxc/100.conf' does not exist\n"
    config = await on("pve3", "pct config 100")
    assert config.exit_status == 0 and "hostname: web-100" in config.stdout
    assert "before" in (await on("pve3", "pct listsnapshot 100")).stdout
    assert [(r["vmid"], r["node"]) for r in await _resources(on, "pve2")] == [(100, "pve3")]
    etc_pve = cluster.node_model("pve1").host_path("/etc/pve/nodes")
    assert (etc_pve / "pve3" / "lxc" / "100.conf").is_file()
    assert not (etc_pve / "pve1" / "lxc" / "100.conf").exists()


async def test_a_running_container_moves_only_in_restart_mode(on):
    await on("pve1", CREATE.format(vmid=100))
    await on("pve1", "pct start 100")
    refused = await on("pve1", "pct migrate 100 pve2")
    assert refused.exit_status == 255
    assert refused.stderr == "can't migrate running container without --online or --restart\n"
    online = await on("pve1", "pct migrate 100 pve2 --online")
    assert online.stderr == "lxc live migration is currently not implemented\n"
    assert (await on("pve1", "pct status 100")).stdout == "status: running\n"
    moved = await on("pve1", "pct migrate 100 pve2 --restart")
    assert moved.exit_status == 0, moved.stderr
    assert "shutdown CT 100" in moved.stdout and "start container on target node" in moved.stdout
    assert (await on("pve2", "pct status 100")).stdout == "status: running\n"


async def test_migrate_checks_the_target_first_as_pve_does(on):
    await on("pve1", CREATE.format(vmid=100))
    local = await on("pve1", "pct migrate 100 pve1")
    assert local.stderr == "400 Parameter verification failed.\ntarget: target is local node.\n"
    unknown = await on("pve1", "pct migrate 100 pve9")
    assert unknown.stderr == "no such cluster node 'pve9'\n"
    elsewhere = await on("pve2", "pct migrate 100 pve3")
    assert elsewhere.stderr == "Configuration file 'nodes/pve2/lxc/100.conf' does not exist\n"


async def test_cluster_state_survives_a_restart_of_the_simulator(tmp_path):
    env = SimEnv(tmp_path / "sim", nodes=NODES)
    try:
        async with await env.connect("pve2") as conn:
            await conn.run(CREATE.format(vmid=100))
            await conn.run("pvesh create /cluster/firewall/groups --group web")
            await conn.run("pct migrate 100 pve1")
    finally:
        env.stop()
    again = SimEnv(tmp_path / "sim", nodes=NODES)
    try:
        assert "100" in again.node_model("pve1").containers
        assert not again.node_model("pve2").containers
        assert "web" in again.node_model("pve3").data["firewall"]["groups"]
    finally:
        again.stop()


async def test_a_signal_on_the_channel_kills_the_running_command(cluster):
    async with await cluster.connect() as conn:
        process = await conn.create_process("timeout -k 5 60 sleep 60")
        process.stdin.write_eof()
        process.send_signal("TERM")
        await process.wait_closed()
        assert process.exit_signal is not None and process.exit_signal[0] == "TERM"
    assert cluster.sim.sim.killed == 1


async def test_vzdump_skips_another_nodes_guest_without_an_error(cluster, on):
    await on("pve1", CREATE.format(vmid=100))
    skipped = await on("pve2", "vzdump 100 --dumpdir /var/lib/vz/dump")
    assert skipped.exit_status == 0
    assert "INFO: skip external VMs: 100\n" in skipped.stderr
    assert "creating vzdump archive" not in skipped.stderr
    assert not list(cluster.node_model("pve2").host_path("/var/lib/vz/dump").iterdir())
    unknown = await on("pve2", "vzdump 4242 --dumpdir /var/lib/vz/dump")
    assert unknown.exit_status == 255 and "unable to find VM '4242'" in unknown.stderr


async def test_node_status_answers_as_pve_with_each_nodes_own_hardware(cluster, on):
    set_hardware(cluster.node_model("pve2"), 32, 24_576)
    await on("pve1", CREATE.format(vmid=100))
    await on("pve1", "pct start 100")
    one = await on("pve1", "pvesh get /nodes/pve1/status --output-format json")
    assert one.exit_status == 0, one.stderr
    status = json.loads(str(one.stdout))
    assert status["cpuinfo"]["cpus"] == 16  # the default node: 16 CPUs, 64 GiB
    memory = status["memory"]
    assert memory["total"] == 64 * 1024**3 and memory["used"] + memory["free"] == memory["total"]
    assert all(isinstance(memory[k], int) for k in ("total", "used", "free"))
    assert [type(x) for x in status["loadavg"]] == [str, str, str] and isinstance(status["uptime"], int)
    assert {"cpu", "wait", "kversion", "pveversion", "rootfs", "swap", "ksm", "current-kernel"} <= set(status)
    # the other node's own hardware, reached through any node (the API proxies to it)
    other = json.loads(str((await on("pve1", "pvesh get /nodes/pve2/status --output-format json")).stdout))
    assert other["cpuinfo"]["cpus"] == 32 and other["memory"]["total"] == 24_576 * 1024**2
    # a running 512 MB guest is used memory on its node only
    assert memory["used"] - other["memory"]["used"] == 512 * 1024**2
    rows = json.loads(str((await on("pve3", "pvesh get /cluster/resources --type node --output-format json")).stdout))
    assert {r["node"]: (r["maxcpu"], r["maxmem"]) for r in rows} == {
        "pve1": (16, 64 * 1024**3),
        "pve2": (32, 24_576 * 1024**2),
        "pve3": (16, 64 * 1024**3),
    }
    assert json.loads(str((await on("pve3", "pvesh get /nodes/pve3/qemu --output-format json")).stdout)) == []


async def test_node_status_refuses_unknown_and_malformed_nodes_as_pve_does(on):
    unknown = await on("pve1", "pvesh get /nodes/pve9/status --output-format json")
    assert unknown.exit_status != 0 and unknown.stdout == ""
    assert unknown.stderr == (
        "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known\n"
    )
    bad = await on("pve1", "pvesh get /nodes/pve_9!/status")
    assert (
        bad.stderr
        == "400 Parameter verification failed.\nnode: invalid format - value does not look like a valid node name\n"
    )


async def test_a_node_powered_off_refuses_ssh_and_the_others_report_it_offline(cluster, on):
    assert (await on("pve1", CREATE.format(vmid=101))).exit_status == 0
    assert (await on("pve1", "pct migrate 101 pve3")).exit_status == 0
    cluster.power_off("pve3")
    with pytest.raises(asyncssh.Error):
        await on("pve3", "hostname")  # the open connection was dropped
    with pytest.raises(OSError):
        await cluster.connect("pve3")  # and a new one is refused
    rows = await _resources(on, "pve2")
    assert [(r["vmid"], r["node"], r["status"]) for r in rows] == [(101, "pve3", "unknown")]
    nodes = json.loads((await on("pve1", "pvesh get /cluster/resources --type node --output-format json")).stdout)
    assert {r["node"]: r["status"] for r in nodes} == {"pve1": "online", "pve2": "online", "pve3": "offline"}
    status = json.loads((await on("pve2", "pvesh get /cluster/status --output-format json")).stdout)
    assert {r["name"]: r["online"] for r in status if r["type"] == "node"} == {"pve1": 1, "pve2": 1, "pve3": 0}


@pytest.mark.parametrize("ssh_only", [True, False])
async def test_a_migration_to_a_node_whose_ssh_does_not_answer_aborts_before_touching_the_container(
    cluster, on, ssh_only
):
    """LXC::Migrate's prepare tests `ssh <target> /bin/true` after its lock and state checks, before
    the restart-mode shutdown: the container stays where it is, running, unlocked."""
    assert (await on("pve1", CREATE.format(vmid=101))).exit_status == 0
    assert (await on("pve1", "pct start 101")).exit_status == 0
    cluster.power_off("pve3", ssh_only=ssh_only)
    refused = await on("pve1", "pct migrate 101 pve3 --restart")
    assert (refused.exit_status, refused.stderr) == (255, "migration aborted\n")
    assert str(refused.stdout).endswith(  # the task log, as AbstractMigrate prints it
        " ERROR: migration aborted (duration 00:00:00): Can't connect to destination address using public key\n"
    )
    assert "101" in cluster.node_model("pve1").containers and "101" not in cluster.node_model("pve3").containers
    assert cluster.node_model("pve1").containers["101"]["status"] == "running"
    assert "lock" not in cluster.node_model("pve1").containers["101"]["config"]
    # the state checks come first, as in PVE: a running container without --restart is refused for that
    assert "without --online or --restart" in str((await on("pve1", "pct migrate 101 pve3")).stderr)
    cluster.power_on("pve3")
    assert (await on("pve1", "pct migrate 101 pve3 --restart")).exit_status == 0
    assert cluster.node_model("pve3").containers["101"]["status"] == "running"


async def test_a_node_left_alone_has_no_quorum_and_refuses_start_and_migrate_but_reads_and_stops(cluster, on):
    """PVE's `check_cfs_quorum` (vm_start after its running check, migrate_vm after its local-node
    check, clone_vm) and a read-only /etc/pve (create): one node of three online is no majority.
    Reads and stop need no quorum."""
    for vmid in ("101", "102"):
        assert (await on("pve1", CREATE.format(vmid=vmid))).exit_status == 0
    assert (await on("pve1", "pct start 101")).exit_status == 0
    cluster.power_off("pve3")  # two of three: still quorate
    assert (await on("pve1", "pct start 102")).exit_status == 0
    assert (await on("pve1", "pct stop 102")).exit_status == 0
    cluster.power_off("pve2", ssh_only=True)  # corosync still sees pve2: still quorate
    assert (await on("pve1", "pct start 102")).exit_status == 0
    assert (await on("pve1", "pct stop 102")).exit_status == 0
    cluster.power_off("pve2")
    for line in ("pct start 102", "pct migrate 102 pve2", "pct migrate 101 pve9 --restart", "pct clone 102 104"):
        refused = await on("pve1", line)
        assert (refused.exit_status, refused.stderr) == (255, "cluster not ready - no quorum?\n"), line
    # create reserves the ID by writing its config into /etc/pve first, which pmxcfs refuses without quorum
    created = await on("pve1", CREATE.format(vmid=103))
    assert (created.exit_status, created.stderr) == (255, "Could not reserve ID 103, already taken\n")
    assert set(cluster.node_model("pve1").containers) == {"101", "102"}
    assert "already running" in str((await on("pve1", "pct start 101")).stderr)  # checked before quorum
    assert (await on("pve1", "pct stop 101")).exit_status == 0
    assert cluster.node_model("pve1").containers["102"]["status"] == "stopped"
    assert len(await _resources(on, "pve1")) == 2
    cluster.power_on("pve2")
    assert (await on("pve1", "pct start 102")).exit_status == 0


async def test_a_shared_storage_is_one_folder_every_node_sees_and_is_reported_shared(cluster, on):
    mount = cluster.sim.add_shared_storage("nas")
    assert (await on("pve1", f"mkdir -p {mount}/dump")).exit_status == 0
    assert (await on("pve3", f"ls {mount}")).stdout.split() == ["dump", "template"]
    rows = json.loads((await on("pve2", "pvesh get /cluster/resources --type storage --output-format json")).stdout)
    shared = {(r["node"], r["storage"]): r["shared"] for r in rows}
    assert shared[("pve3", "nas")] == 1 and shared[("pve3", "local")] == 0
    nas = json.loads((await on("pve2", "pvesh get /storage/nas --output-format json")).stdout)
    assert (nas["type"], nas["path"], nas["shared"]) == ("nfs", mount, 1)


async def test_without_quorum_every_write_to_etc_pve_is_refused_after_the_state_checks(cluster, on):
    """pmxcfs is read-only without quorum: PVE's config writes (`PVE::Tools::file_set_contents` of
    `nodes/<node>/lxc/<vmid>.conf`, through a temporary file) fail with EACCES, after the command's
    own checks (existence, lock, running, parameters). Nothing changes; reads still work."""
    for vmid in ("101", "102"):
        assert (await on("pve1", CREATE.format(vmid=vmid))).exit_status == 0
    assert (await on("pve1", "pct snapshot 101 before")).exit_status == 0
    assert (await on("pve1", "pct start 102")).exit_status == 0
    cluster.power_off("pve2")
    cluster.power_off("pve3")
    model = cluster.node_model("pve1")
    before = json.dumps(model.containers, sort_keys=True)
    refused = re.compile(r"unable to open file '/etc/pve/nodes/pve1/lxc/(\d+)\.conf\.tmp\.\d+' - Permission denied\n")
    for vmid, line in [
        ("101", "pct set 101 --memory 1024"),
        ("101", "pct set 101 --onboot 1 --tags web --description hello"),
        ("101", "pct set 101 --delete description"),
        ("101", "pct resize 101 rootfs +1G"),
        ("101", "pct snapshot 101 after"),
        ("101", "pct delsnapshot 101 before"),
        ("101", "pct rollback 101 before"),
        ("101", "pct destroy 101"),
        ("101", "pct template 101"),
        ("102", "pct set 102 --cores 2"),
    ]:
        answer = await on("pve1", line)
        assert answer.exit_status == 255, line
        match = refused.fullmatch(str(answer.stderr))
        assert match is not None and match.group(1) == vmid, (line, answer.stderr)
    assert json.dumps(cluster.node_model("pve1").containers, sort_keys=True) == before
    # the command's own checks come first, as in PVE
    assert "does not exist" in str((await on("pve1", "pct set 109 --memory 1024")).stderr)
    assert "container is running" in str((await on("pve1", "pct destroy 102")).stderr)
    assert "already used" in str((await on("pve1", "pct snapshot 101 before")).stderr)
    assert "400 Parameter verification failed" in str((await on("pve1", "pct set 101 --memory x")).stderr)
    for read in ("pct config 101", "pct listsnapshot 101", "pct status 102", "pct list"):
        assert (await on("pve1", read)).exit_status == 0, read
    cluster.power_on("pve2")
    assert (await on("pve1", "pct set 101 --memory 1024")).exit_status == 0
    assert cluster.node_model("pve1").containers["101"]["config"]["memory"] == 1024


async def test_without_quorum_backups_and_restores_are_refused_where_pve_writes_to_etc_pve(cluster, on):
    """vzdump writes its `backup` lock into the config before the archive, and a restore writes the
    config (in place with --force, after reserving the ID for a new one): pmxcfs refuses both without
    quorum, so no archive is written and no container changes."""
    assert (await on("pve1", CREATE.format(vmid=101))).exit_status == 0
    dump = await on("pve1", "vzdump 101 --dumpdir /var/lib/vz/dump")
    assert dump.exit_status == 0
    archive = dump.stderr.split("creating vzdump archive '")[1].split("'")[0]
    dumps = cluster.node_model("pve1").host_path("/var/lib/vz/dump")
    kept = sorted(dumps.iterdir())
    cluster.power_off("pve2")
    cluster.power_off("pve3")
    before = json.dumps(cluster.node_model("pve1").containers, sort_keys=True)
    refused = await on("pve1", "vzdump 101 --dumpdir /var/lib/vz/dump")
    assert refused.exit_status == 255
    assert re.search(
        r"ERROR: Backup of VM 101 failed - unable to open file '/etc/pve/nodes/pve1/lxc/101\.conf\.tmp\.\d+' "
        r"- Permission denied\n",
        refused.stderr,
    ), refused.stderr
    assert "creating vzdump archive" not in refused.stderr and sorted(dumps.iterdir()) == kept
    new = await on("pve1", f"pct restore 102 {archive} --storage local-lvm")
    assert (new.exit_status, new.stderr) == (255, "Could not reserve ID 102, already taken\n")
    over = await on("pve1", f"pct restore 101 {archive} --storage local-lvm --force")
    assert over.exit_status == 255 and "lxc/101.conf.tmp." in over.stderr and "Permission denied" in over.stderr
    assert json.dumps(cluster.node_model("pve1").containers, sort_keys=True) == before
    cluster.power_on("pve2")  # two of three: quorate again
    assert (await on("pve1", f"pct restore 102 {archive} --storage local-lvm")).exit_status == 0
    assert (await on("pve1", "vzdump 101 --dumpdir /var/lib/vz/dump")).exit_status == 0


async def test_without_quorum_pvesh_writes_are_refused_by_their_cfs_lock_and_reads_still_answer(cluster, on):
    """pvesh's firewall writes take a cfs lock first (`lock_clusterfw_conf`, `lock_vmfw_conf`: a folder
    under /etc/pve/priv/lock, which pmxcfs refuses without quorum); PVE::Cluster's cfs_lock retries
    until its timeout, a line a second, then reports `cfs-lock '<id>' error: no quorum!`. A start
    through the API is `check_cfs_quorum`'s refusal. Nothing changes; reads still answer."""
    assert (await on("pve1", CREATE.format(vmid=101))).exit_status == 0
    assert (await on("pve1", CREATE.format(vmid=102))).exit_status == 0
    for line in (
        "pvesh create /cluster/firewall/groups --group web",
        "pvesh create /cluster/firewall/groups/web --type in --action ACCEPT --proto tcp --dport 80",
        "pvesh create /nodes/pve1/lxc/101/firewall/rules --type group --action web --enable 1",
    ):
        assert (await on("pve1", line)).exit_status == 0, line
    cluster.power_off("pve2")
    cluster.power_off("pve3")
    model = cluster.node_model("pve1")
    before = json.dumps([model.data["firewall"], model.containers], sort_keys=True)
    for line, lock in [
        ("pvesh create /cluster/firewall/groups --group db", "firewall-cluster"),
        ("pvesh create /cluster/firewall/groups/web --type in --action DROP --proto udp", "firewall-cluster"),
        ("pvesh delete /cluster/firewall/groups/web/0", "firewall-cluster"),
        ("pvesh delete /cluster/firewall/groups/web", "firewall-cluster"),
        ("pvesh set /cluster/firewall/options --enable 1", "firewall-cluster"),
        ("pvesh create /nodes/pve1/lxc/101/firewall/rules --type in --action ACCEPT", "firewall-vm-101"),
        ("pvesh set /nodes/pve1/lxc/101/firewall/rules/0 --enable 0", "firewall-vm-101"),
        ("pvesh delete /nodes/pve1/lxc/101/firewall/rules/0", "firewall-vm-101"),
        ("pvesh set /nodes/pve1/lxc/101/firewall/options --enable 1", "firewall-vm-101"),
    ]:
        refused = await on("pve1", line)
        lines = str(refused.stderr).splitlines()
        assert refused.exit_status == 255 and lines[-1] == f"cfs-lock '{lock}' error: no quorum!", (line, lines)
        assert lines[:-1] and set(lines[:-1]) == {f"trying to acquire cfs lock '{lock}' ..."}, (line, lines)
    started = await on("pve1", "pvesh create /nodes/pve1/lxc/102/status/start")
    assert (started.exit_status, started.stderr) == (255, "cluster not ready - no quorum?\n")
    assert json.dumps([model.data["firewall"], model.containers], sort_keys=True) == before
    for read in (
        "pvesh get /cluster/firewall/groups --output-format json",
        "pvesh get /cluster/firewall/groups/web --output-format json",
        "pvesh get /nodes/pve1/lxc/101/firewall/rules --output-format json",
        "pvesh get /cluster/firewall/options --output-format json",
    ):
        assert (await on("pve1", read)).exit_status == 0, read
    cluster.power_on("pve3")  # two of three: quorate again
    assert (await on("pve1", "pvesh create /cluster/firewall/groups --group db")).exit_status == 0
    assert (await on("pve1", "pvesh delete /nodes/pve1/lxc/101/firewall/rules/0")).exit_status == 0
    assert (await on("pve1", "pvesh create /nodes/pve1/lxc/102/status/start")).exit_status == 0


async def test_cluster_status_and_pvecm_say_when_the_cluster_has_lost_quorum(cluster, on):
    """`/cluster/status`'s cluster row (`quorate`) and `pvecm status` (`Quorate:`) follow corosync's votes."""

    async def quorate() -> tuple[int, bool]:
        rows = json.loads(str((await on("pve1", "pvesh get /cluster/status --output-format json")).stdout))
        pvecm = str((await on("pve1", "pvecm status")).stdout)
        return next(r["quorate"] for r in rows if r["type"] == "cluster"), "Quorate:          Yes" in pvecm

    assert await quorate() == (1, True)
    cluster.power_off("pve3")
    assert await quorate() == (1, True)
    cluster.power_off("pve2")
    assert await quorate() == (0, False)
    cluster.power_on("pve2")
    assert await quorate() == (1, True)
