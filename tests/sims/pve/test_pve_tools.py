"""pve-sim answers like the real tools (formats, exit codes, messages), over real SSH."""

from __future__ import annotations

import json
import tarfile

import asyncssh
import pytest

from tests.sims.pve.simenv import TEMPLATE, SimEnv

CREATE = (
    f"pct create {{vmid}} {TEMPLATE} --memory 512 --cpulimit 1 "
    "--net0 name=eth0,bridge=vmbr0,ip=dhcp --rootfs local-lvm:8 --hostname web-{vmid} --onboot 1"
)


@pytest.fixture
async def ssh(fresh_sim: SimEnv):
    async with await fresh_sim.connect() as conn:

        async def run(line: str, **kw):
            return await conn.run(line, **kw)

        yield run


async def test_pct_list_columns_and_config_lines(ssh):
    assert (await ssh(CREATE.format(vmid=100))).exit_status == 0
    listing = (await ssh("pct list")).stdout.splitlines()
    assert listing[0].split() == ["VMID", "Status", "Lock", "Name"]
    assert listing[0].startswith("VMID       Status     Lock         Name")
    assert listing[1][:10].strip() == "100" and listing[1][11:21].strip() == "stopped"
    assert listing[1][35:].strip() == "web-100"
    config = (await ssh("pct config 100")).stdout.splitlines()
    keys = [line.split(": ", 1)[0] for line in config]
    assert keys == sorted(keys)
    values = dict(line.split(": ", 1) for line in config)
    assert values["rootfs"] == "local-lvm:vm-100-disk-0,size=8G"
    assert values["net0"].startswith("name=eth0,bridge=vmbr0,hwaddr=") and values["net0"].endswith(",ip=dhcp,type=veth")
    assert values["onboot"] == "1" and values["memory"] == "512"


async def test_missing_container_message_and_exit_code(ssh):
    result = await ssh("pct config 105")
    assert result.exit_status == 255
    assert result.stderr == "Configuration file 'nodes/pve/lxc/105.conf' does not exist\n"
    result = await ssh("pct start 105")
    assert result.exit_status == 255 and "105.conf' does not exist" in result.stderr


async def test_state_errors_running_shrink_and_unknown_option(ssh):
    await ssh(CREATE.format(vmid=100))
    assert (await ssh("pct start 100")).exit_status == 0
    again = await ssh("pct start 100")
    assert (again.exit_status, again.stderr) == (255, "CT 100 already running\n")
    destroy = await ssh("pct destroy 100 --purge")
    assert destroy.exit_status == 255 and "container is running" in destroy.stderr
    shrink = await ssh("pct resize 100 rootfs 4G")
    assert (shrink.exit_status, shrink.stderr) == (255, "unable to shrink disk size\n")
    grow = await ssh("pct resize 100 rootfs +8G")
    assert grow.exit_status == 0
    assert "size=16G" in (await ssh("pct config 100")).stdout
    unknown = await ssh("pct set 100 --bogus 1")
    assert unknown.exit_status == 255 and unknown.stderr.startswith("Unknown option: bogus")
    bad_type = await ssh("pct set 100 --memory lots")
    assert "400 Parameter verification failed." in bad_type.stderr
    assert "memory: type check ('integer') failed - got 'lots'" in bad_type.stderr


async def test_locked_container_refuses_changes(fresh_sim: SimEnv, ssh):
    await ssh(CREATE.format(vmid=100))
    fresh_sim.model.containers["100"]["lock"] = "backup"
    result = await ssh("pct start 100")
    assert (result.exit_status, result.stderr) == (255, "CT is locked (backup)\n")
    assert "lock: backup" in (await ssh("pct config 100")).stdout
    fresh_sim.model.containers["100"]["lock"] = None


async def test_nextid_is_lowest_free_and_checks_a_given_id(ssh):
    assert (await ssh("pvesh get /cluster/nextid")).stdout == "100\n"
    await ssh(CREATE.format(vmid=100))
    await ssh(CREATE.format(vmid=102))
    assert (await ssh("pvesh get /cluster/nextid")).stdout == "101\n"
    taken = await ssh("pvesh get /cluster/nextid --vmid 102")
    assert taken.exit_status == 255 and "vmid: VM 102 already exists" in taken.stderr
    assert (await ssh("pvesh get /cluster/nextid --vmid 103")).stdout == "103\n"


async def test_pvesh_json_and_unknown_path(ssh):
    await ssh(CREATE.format(vmid=100))
    rows = json.loads((await ssh("pvesh get /nodes/pve/lxc --output-format json")).stdout)
    assert rows[0]["vmid"] == 100 and rows[0]["status"] == "stopped" and rows[0]["maxmem"] == 512 * 1024**2
    config = json.loads((await ssh("pvesh get /nodes/pve/lxc/100/config --output-format json")).stdout)
    assert config["hostname"] == "web-100" and "digest" in config
    missing = await ssh("pvesh get /nowhere")
    assert missing.exit_status == 255 and missing.stderr == "No 'get' handler defined for '/nowhere'\n"


async def test_firewall_groups_rules_positions(ssh):
    assert (await ssh("pvesh create /cluster/firewall/groups --group web --comment 'web tier'")).exit_status == 0
    dup = await ssh("pvesh create /cluster/firewall/groups --group web")
    assert dup.exit_status == 255 and "already exists" in dup.stderr
    await ssh("pvesh create /cluster/firewall/groups/web --type in --action ACCEPT --proto tcp --dport 80 --enable 1")
    await ssh("pvesh create /cluster/firewall/groups/web --type in --action ACCEPT --proto tcp --dport 443 --enable 1")
    rules = json.loads((await ssh("pvesh get /cluster/firewall/groups/web --output-format json")).stdout)
    assert [(r["pos"], r["dport"]) for r in rules] == [(0, "443"), (1, "80")]  # new rules go on top
    busy = await ssh("pvesh delete /cluster/firewall/groups/web")
    assert busy.exit_status == 255 and "is not empty" in busy.stderr
    groups = json.loads((await ssh("pvesh get /cluster/firewall/groups --output-format json")).stdout)
    assert groups[0]["group"] == "web" and groups[0]["comment"] == "web tier"


async def test_vzdump_writes_a_restorable_archive(fresh_sim: SimEnv, ssh):
    await ssh(CREATE.format(vmid=100))
    bad = await ssh("vzdump 100 --compress 6")
    assert bad.exit_status == 255 and "compress: value '6'" in bad.stderr
    dump = await ssh("vzdump 100 --mode snapshot --compress gzip --dumpdir /var/lib/vz/dump")
    assert dump.exit_status == 0
    assert "INFO: creating vzdump archive '/var/lib/vz/dump/vzdump-lxc-100-" in dump.stderr
    archive = dump.stderr.split("creating vzdump archive '")[1].split("'")[0]
    with tarfile.open(fresh_sim.model.host_path(archive)) as tar:
        assert b"hostname: web-100" in tar.extractfile("./etc/vzdump/pct.conf").read()
    exists = await ssh(f"pct restore 100 {archive} --storage local-lvm")
    assert exists.exit_status == 255 and "already exists" in exists.stderr
    restored = await ssh(f"pct restore 101 {archive} --storage local-lvm")
    assert restored.exit_status == 0
    assert "hostname: web-100" in (await ssh("pct config 101")).stdout
    assert fresh_sim.model.host_path(archive).exists()  # the backup is kept


async def test_exec_needs_running_and_has_no_shell(ssh):
    await ssh(CREATE.format(vmid=100))
    stopped = await ssh("pct exec 100 -- hostname")
    assert (stopped.exit_status, stopped.stderr) == (255, "CT 100 not running\n")
    await ssh("pct start 100")
    assert (await ssh("pct exec 100 -- hostname")).stdout == "web-100\n"
    nosh = await ssh("pct exec 100 -- 'echo hi; id'")
    assert nosh.exit_status == 127 and "Failed to exec" in nosh.stderr


async def test_snapshots_tree_and_errors(ssh):
    await ssh(CREATE.format(vmid=100))
    assert (await ssh("pct snapshot 100 first")).exit_status == 0
    used = await ssh("pct snapshot 100 first")
    assert used.stderr == "snapshot name 'first' already used\n"
    tree = (await ssh("pct listsnapshot 100")).stdout
    assert tree.startswith("`-> first") and "`-> current" in tree and "You are here!" in tree
    gone = await ssh("pct delsnapshot 100 nope")
    assert gone.stderr == "snapshot 'nope' does not exist\n"


async def test_timeout_wrapper_and_unknown_command(ssh):
    result = await ssh("timeout -k 5 1 sleep 3")
    assert result.exit_status == 124
    missing = await ssh("frobnicate --now")
    assert missing.exit_status == 127 and "command not found" in missing.stderr


async def test_model_persists_across_restart(tmp_path):
    env = SimEnv(tmp_path / "s")
    async with asyncssh.connect(
        "127.0.0.1", env.port, username="root", client_keys=[str(env.client_key)], known_hosts=str(env.known_hosts)
    ) as conn:
        await conn.run(CREATE.format(vmid=120))
    env.stop()
    again = SimEnv(tmp_path / "s")
    try:
        assert "120" in again.model.containers
        assert (tmp_path / "s/state/fs/etc/pve/nodes/pve/lxc/120.conf").read_text().startswith("arch: amd64")
    finally:
        again.stop()


async def test_unknown_key_is_refused(fresh_sim: SimEnv, tmp_path):
    other = asyncssh.generate_private_key("ssh-ed25519")
    other.write_private_key(str(tmp_path / "other"))
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect(
            "127.0.0.1",
            fresh_sim.port,
            username="root",
            client_keys=[str(tmp_path / "other")],
            known_hosts=str(fresh_sim.known_hosts),
        )


async def _running_ct(ssh, vmid: int = 100, nesting: bool = False) -> None:
    assert (await ssh(CREATE.format(vmid=vmid))).exit_status == 0
    if nesting:
        assert (await ssh(f"pct set {vmid} --features nesting=1,keyctl=1")).exit_status == 0
    assert (await ssh(f"pct start {vmid}")).exit_status == 0


async def test_apt_get_is_as_strict_as_debian_12(ssh):
    """Unknown package (no lists yet, or not in bookworm): 100 and nothing done; a known package
    that is not installed is only noted; remove leaves conffiles, which purge takes."""
    await _running_ct(ssh)
    before_update = await ssh("pct exec 100 -- apt-get remove -y docker.io")
    assert before_update.exit_status == 100 and "Unable to locate package docker.io" in before_update.stderr
    assert (await ssh("pct exec 100 -- apt-get update")).exit_status == 0
    v2 = await ssh("pct exec 100 -- apt-get remove -y docker-compose-v2 curl")
    assert v2.exit_status == 100 and "Unable to locate package docker-compose-v2" in v2.stderr
    query = await ssh("pct exec 100 -- dpkg-query -W -f '${Package} ${Status}\\n' curl")
    assert query.exit_status == 0 and query.stdout == "curl install ok installed\n"  # nothing was removed
    noted = await ssh("pct exec 100 -- apt-get remove -y docker.io")
    assert noted.exit_status == 0 and "Package 'docker.io' is not installed, so not removed" in noted.stdout
    assert (await ssh("pct exec 100 -- apt-get install -y docker.io")).exit_status == 0
    assert (await ssh("pct exec 100 -- apt-get remove -y docker.io")).exit_status == 0
    left = await ssh("pct exec 100 -- dpkg-query -W -f '${Package} ${Status}\\n' docker.io nosuch")
    assert left.exit_status == 1 and left.stdout == "docker.io deinstall ok config-files\n"
    assert "dpkg-query: no packages found matching nosuch" in left.stderr
    assert (await ssh("pct exec 100 -- apt-get purge -y docker.io")).exit_status == 0
    gone = await ssh("pct exec 100 -- dpkg-query -W docker.io")
    assert gone.exit_status == 1 and gone.stdout == ""


async def test_docker_rm_prune_and_volumes_are_as_strict_as_docker(ssh):
    await _running_ct(ssh, nesting=True)
    assert (await ssh("pct exec 100 -- apt-get update")).exit_status == 0
    assert (await ssh("pct exec 100 -- apt-get install -y docker.io")).exit_status == 0
    run = "pct exec 100 -- docker run -d --name {name} -v {volume} nginx:1.27"
    assert (await ssh(run.format(name="web", volume="webdata:/srv"))).exit_status == 0
    assert (await ssh(run.format(name="tmp", volume="/scratch"))).exit_status == 0
    ids = (await ssh("pct exec 100 -- docker ps -aq")).stdout.split()
    assert len(ids) == 2 and all(len(i) == 12 for i in ids)
    refused = await ssh("pct exec 100 -- docker rm web")
    assert refused.exit_status == 1 and "You cannot remove a running container" in refused.stderr
    pruned = await ssh("pct exec 100 -- docker system prune -a -f --volumes")
    assert pruned.exit_status == 0  # running containers and their volumes are untouched
    assert len((await ssh("pct exec 100 -- docker ps -aq")).stdout.split()) == 2
    volumes = (await ssh("pct exec 100 -- docker volume ls -q")).stdout.split()
    assert "webdata" in volumes and len(volumes) == 2
    in_use = await ssh("pct exec 100 -- docker volume rm -f webdata")
    assert in_use.exit_status == 1 and "volume is in use" in in_use.stderr
    assert (await ssh("pct exec 100 -- docker rm -f -v " + " ".join(ids))).exit_status == 0
    assert (await ssh("pct exec 100 -- docker volume ls -q")).stdout.split() == ["webdata"]  # -v: anonymous only
    assert (await ssh("pct exec 100 -- docker volume rm webdata")).exit_status == 0
    missing = await ssh("pct exec 100 -- docker volume rm webdata")
    assert missing.exit_status == 1 and "no such volume" in missing.stderr


async def test_pct_set_checks_tags_startup_and_addresses_like_pct(ssh):
    assert (await ssh(CREATE.format(vmid=100))).exit_status == 0
    for option in (
        "--tags 'bad tag!'",
        "--startup sometime",
        "--net0 name=eth0,bridge=vmbr0,ip6=2001:db8::1",
        "--net0 name=eth0,bridge=vmbr0,ip=10.0.0.5",
        "--net0 name=eth0,bridge=vmbr0,gw6=10.0.0.1",
    ):
        refused = await ssh(f"pct set 100 {option}")
        assert refused.exit_status != 0 and "400 Parameter verification failed" in refused.stderr, option
    ok = await ssh("pct set 100 --tags 'web;prod' --startup order=1,up=5 --net0 name=eth0,bridge=vmbr0,ip6=auto")
    assert ok.exit_status == 0, ok.stderr
    config = (await ssh("pct config 100")).stdout
    assert "tags: web;prod" in config and "startup: order=1,up=5" in config and "ip6=auto" in config
    assert (await ssh("pct rollback 100")).exit_status != 0  # needs a snapshot name


async def test_vzdump_refuses_a_dumpdir_that_does_not_exist(ssh):
    await ssh(CREATE.format(vmid=100))
    missing = await ssh("vzdump 100 --mode stop --dumpdir /var/tmp/nowhere")
    assert (missing.exit_status, missing.stderr) == (255, "dumpdir '/var/tmp/nowhere' does not exist\n")
    assert (await ssh("mkdir -p /var/tmp/here")).exit_status == 0
    made = await ssh("vzdump 100 --mode stop --dumpdir /var/tmp/here")
    assert made.exit_status == 0 and "creating vzdump archive '/var/tmp/here/vzdump-lxc-100-" in made.stderr


async def test_rm_removes_a_folder_only_when_recursive_and_never_the_root(ssh):
    assert (await ssh("mkdir -p /var/tmp/stage/sub")).exit_status == 0
    plain = await ssh("rm -f /var/tmp/stage")
    assert (plain.exit_status, plain.stderr) == (1, "rm: cannot remove '/var/tmp/stage': Is a directory\n")
    assert (await ssh("rm -rf /var/tmp/stage")).exit_status == 0
    assert (await ssh("ls /var/tmp/stage")).exit_status == 2
    root = await ssh("rm -rf /")
    assert root.exit_status == 1 and "dangerous to operate recursively on '/'" in root.stderr


async def test_apt_refuses_while_another_apt_holds_its_lock(fresh_sim, ssh):
    fresh_sim.model.data["apt"]["lock_holder"] = 4242
    update = await ssh("apt-get update")
    assert update.exit_status == 100
    assert update.stderr.startswith("E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242")
    upgrade = await ssh("apt-get -y dist-upgrade")
    assert upgrade.exit_status == 100 and "Unable to acquire the dpkg frontend lock" in upgrade.stderr
    assert fresh_sim.model.data["apt"]["upgradable"]  # nothing was upgraded


async def test_pvesh_describes_a_storage_as_storage_cfg_does(ssh):
    local = json.loads((await ssh("pvesh get /storage/local --output-format json")).stdout)
    assert (local["type"], local["path"], local["content"]) == ("dir", "/var/lib/vz", "vztmpl,backup,iso")
    assert "shared" not in local
    missing = await ssh("pvesh get /storage/nas --output-format json")
    assert (missing.exit_status, missing.stderr) == (255, "storage 'nas' does not exist\n")
