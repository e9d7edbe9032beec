"""The I/O shell around Squid and dnsmasq: what it writes, which files change, how it signals, restarts
and fails.

The behaviour that depends on Squid (reconfiguring, enforcing, logging) runs against the real Squid and
dnsmasq on loopback; the failure paths use small scripts in their place, whose behaviour the test decides.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import httpx
import pytest

from actors.webfilter.dataplane import DataPlane, DataPlaneError, ProxySettings, _write_atomic, free_dns_address
from actors.webfilter.proxy import ProxyOwner
from actors.webfilter.squidconf import Policy
from rayfleet.supervisor import RestartPolicy
from tests.conftest import free_port
from tests.deployments.webfilter.conftest import require_dataplane, state_folder
from tests.polling import eventually_sync

HOSTS = {"allowed.test": "127.0.0.1"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (ended, not yet reaped by its parent) counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _resolve(server: str, name: str, timeout: float = 2) -> list[str]:
    answer = dns.query.udp(dns.message.make_query(name, dns.rdatatype.A), server, timeout=timeout)
    return [item.address for rrset in answer.answer for item in rrset]


def _script(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return str(path)


@pytest.fixture(scope="module")
def origin() -> Iterator[int]:
    """A static origin on loopback (a child process of this test)."""
    port = free_port()
    folder = tempfile.mkdtemp(prefix="rf-dp-origin-")
    (Path(folder) / "page.txt").write_text("origin page\n")
    child = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        eventually_sync(
            lambda: httpx.get(f"http://127.0.0.1:{port}/page.txt", trust_env=False), ignore=(httpx.HTTPError,)
        )
        yield port
    finally:
        child.terminate()
        child.wait(timeout=10)


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataPlane]:
    require_dataplane()
    running = DataPlane(tmp_path_factory.mktemp("dataplane"), ProxySettings(hosts=HOSTS))
    running.start(_policy())
    try:
        yield running
    finally:
        running.stop()


def _policy(**changes: object) -> Policy:
    """The policy the shared plane runs between tests, with `changes`."""
    return replace(Policy(domain_blacklist=["sinkholed.test"], ip_blacklist=["192.0.2.1"]), **changes)


def _proxy(plane: DataPlane) -> httpx.Client:
    return httpx.Client(proxy=f"http://127.0.0.1:{plane.port}", trust_env=False, timeout=10)


def test_start_lays_out_the_state_folder_and_runs_squid_and_dnsmasq(plane):
    status = plane.status()
    assert status["running"] and status["dns_running"]
    assert status["proxy"] == f"127.0.0.1:{plane.port}" and status["ssl_bump"] is False
    assert _alive(status["squid_pid"]) and plane.watchdog is not None and plane.watchdog.poll() is None
    root = plane.root
    for path in ("squid.conf", "acl/domain_blacklist.txt", "dns/dnsmasq.conf", "dns/hosts", "run/squid.pid"):
        assert (root / path).is_file(), path
    assert (root / "acl" / "domain_blacklist.txt").read_text() == ".sinkholed.test\n"
    assert f"listen-address={plane.dns}" in (root / "dns" / "dnsmasq.conf").read_text()
    assert (root / "errors" / "ERR_ACCESS_DENIED").is_file()  # Squid's templates are copied once
    assert status["access_log"] == str(root / "logs" / "access.log")
    if os.geteuid() == 0:  # Squid drops to its own user and must write its logs and pid file
        assert (root / "logs").stat().st_uid == (root / "run").stat().st_uid != 0


def test_dnsmasq_answers_the_configured_names_and_sinkholes_the_blacklist(plane):
    assert _resolve(plane.dns, "candidate.test") == [] and _resolve(plane.dns, "sinkholed.test") == ["0.0.0.0"]
    assert _resolve(plane.dns, "sinkholed.test") == ["0.0.0.0"]


def test_squid_proxies_and_denies_by_the_policy_and_logs_each_request(plane, origin):
    with _proxy(plane) as client:
        assert client.get(f"http://allowed.test:{origin}/page.txt").text == "origin page\n"
        denied = client.get(f"http://sinkholed.test:{origin}/page.txt")
    assert denied.status_code == 403
    log = plane.access_log
    eventually_sync(lambda: "sinkholed.test" in log.read_text(), what="the denied request in access.log")
    line = next(ln for ln in log.read_text().splitlines() if "sinkholed.test" in ln)
    assert " 403 " in line and "domain_blacklist" in line


def test_an_acl_edit_rewrites_one_file_and_reconfigures_squid_without_a_restart(plane, origin):
    pid = plane.squid.pid
    conf_before = plane.conf_path.stat().st_mtime_ns
    cache_log = plane.root / "logs" / "cache.log"
    accepting_before = cache_log.read_text(errors="replace").count("HTTP Socket connections at")
    result = plane.apply(_policy(ip_blacklist=["192.0.2.1", "127.0.0.1"]))
    assert result["changed"] is True and result["parse_checked"] is True and result["reconfigure_ms"] > 0
    assert plane.conf_path.stat().st_mtime_ns == conf_before  # squid.conf itself did not change
    assert (plane.root / "acl" / "ip_blacklist.txt").read_text().split() == ["127.0.0.1", "192.0.2.1"]
    assert plane.squid.pid == pid and plane.running()  # SIGHUP, not a new process
    assert cache_log.read_text(errors="replace").count("HTTP Socket connections at") > accepting_before
    with _proxy(plane) as client:  # in effect when apply returns
        assert client.get(f"http://127.0.0.1:{origin}/page.txt").status_code == 403
    plane.apply(_policy())
    with _proxy(plane) as client:
        assert client.get(f"http://127.0.0.1:{origin}/page.txt").status_code == 200


def test_a_candidate_squid_refuses_is_undone_and_the_last_good_configuration_keeps_running(plane, origin):
    """An entry that passed validation but that Squid cannot hold never reaches the running Squid, nor a
    Squid its supervisor restarts, nor DNS: the whole candidate is checked before dnsmasq takes its part, so
    a client asking all through the call never sees the refused edit (it used to, for 0.3-1 s)."""
    acl = plane.root / "acl"
    before = {name: (acl / name).read_text() for name in ("ip_blacklist.txt", "domain_blacklist.txt")}
    conf, pid = plane.conf_path.read_text(), plane.squid.pid
    blocklist, dns_pid = (plane.root / "dns" / "blocklist.conf").read_text(), plane.dnsmasq.pid
    refused = _policy(
        ip_blacklist=["192.0.2.1", "1.2.3.4/99"], domain_blacklist=["sinkholed.test", "allowed.test", "candidate.test"]
    )
    seen: list[list[str]] = []
    applying = threading.Event()

    def ask() -> None:
        while not applying.is_set():
            with contextlib.suppress(Exception):
                seen.append(_resolve(plane.dns, "candidate.test", timeout=0.05))  # a restart drops queries
            time.sleep(0.005)

    asking = threading.Thread(target=ask)
    asking.start()
    try:
        with pytest.raises(
            DataPlaneError, match="refused the configuration.*the last good configuration keeps running"
        ):
            plane.apply(refused)
    finally:
        applying.set()
        asking.join()
    assert seen and ["0.0.0.0"] not in seen
    assert {name: (acl / name).read_text() for name in before} == before and plane.conf_path.read_text() == conf
    assert plane.squid.pid == pid and plane.running()
    assert (plane.root / "dns" / "blocklist.conf").read_text() == blocklist
    assert plane.dnsmasq.pid == dns_pid  # never restarted: it never had the candidate
    assert _resolve(plane.dns, "candidate.test") == [] and _resolve(plane.dns, "sinkholed.test") == ["0.0.0.0"]
    with _proxy(plane) as client:
        assert client.get(f"http://allowed.test:{origin}/page.txt").status_code == 200
    os.kill(pid, signal.SIGKILL)  # what a restarted Squid reads is the last good configuration too
    eventually_sync(lambda: plane.squid is not None and plane.squid.pid != pid, timeout=10, what="Squid restarted")
    with _proxy(plane) as client:
        assert client.get(f"http://allowed.test:{origin}/page.txt").status_code == 200
        assert client.get(f"http://sinkholed.test:{origin}/page.txt").status_code == 403
    assert plane.apply(_policy(ip_blacklist=["192.0.2.1", "192.0.2.2"]))["changed"] is True  # edits go on
    plane.apply(_policy())


def test_only_plain_names_added_to_or_removed_from_the_domain_lists_go_to_dns_first(plane):
    """Such a Squid candidate changes name files only, which Squid cannot refuse; anything else is checked
    whole (Squid's parse included) before dnsmasq takes it."""
    plane.apply(_policy())
    first = plane.apply(_policy(domain_blacklist=["sinkholed.test", "first.test"]))
    assert first["dns_first"] is True and first["parse_checked"] is True
    assert _resolve(plane.dns, "first.test") == ["0.0.0.0"]
    assert plane.apply(_policy(domain_whitelist=["x.sinkholed.test"]))["dns_first"] is False  # a list was empty
    assert plane.apply(_policy(domain_whitelist=["y.sinkholed.test"]))["dns_first"] is True
    assert plane.apply(_policy(domain_blacklist=["sinkholed.test", "*.first.test"]))["dns_first"] is False
    assert plane.apply(_policy(ip_blacklist=["192.0.2.9"]))["dns_first"] is False
    assert plane.apply(_policy(domain_blacklist=["other.test"], block_direct_ip=True))["dns_first"] is False
    plane.apply(_policy())


def test_the_same_policy_again_changes_nothing_and_signals_nobody(plane):
    policy = _policy()
    plane.apply(policy)
    mark = (plane.root / "logs" / "cache.log").stat().st_size
    result = plane.apply(policy)
    assert result["changed"] is False and result["reconfigure_ms"] == 0
    assert (plane.root / "logs" / "cache.log").stat().st_size == mark


def test_a_changed_squid_conf_is_parse_checked_before_the_signal(plane):
    result = plane.apply(_policy(block_direct_ip=True))
    assert result["changed"] and result["parse_checked"] is True
    assert "direct" in plane.conf_path.read_text()
    plane.apply(_policy())


def test_a_blacklist_edit_blocks_the_name_and_its_subdomains_in_dns_and_whitelists_win(plane):
    assert _resolve(plane.dns, "late.test") == []  # not a name dnsmasq knows
    address, pid = plane.dns, plane.dnsmasq.pid
    result = plane.apply(_policy(domain_blacklist=["sinkholed.test", "late.test"]))
    # a name only added: the running dnsmasq reads it from its servers-file on SIGHUP (base + delta)
    assert result["dns_restarted"] is False and result["dns_reloaded"] is True
    assert plane.dns == address and plane.dnsmasq.pid == pid
    assert _resolve(address, "late.test") == ["0.0.0.0"]
    assert _resolve(address, "deep.sub.late.test") == ["0.0.0.0"]  # subdomains too
    aaaa = dns.query.udp(dns.message.make_query("late.test", dns.rdatatype.AAAA), address, timeout=2)
    assert [i.address for r in aaaa.answer for i in r] == ["::"]
    plane.apply(_policy(domain_whitelist=["late.test"], domain_blacklist=["sinkholed.test", "late.test"]))
    assert _resolve(address, "late.test") == []  # whitelisted: not blocked (and no upstream knows it)
    assert _resolve(address, "sinkholed.test") == ["0.0.0.0"]
    plane.apply(_policy(dns_block_mode="nxdomain"))
    answer = dns.query.udp(dns.message.make_query("sinkholed.test", dns.rdatatype.A), address, timeout=2)
    assert answer.rcode() == dns.rcode.NXDOMAIN
    plane.apply(_policy())
    assert plane.apply(_policy())["dns_restarted"] is False  # the same blocklist: dnsmasq untouched


def test_list_edits_applied_by_difference_keep_dnsmasqs_answers_those_of_the_whole_list(plane):
    """Edits the renderer applies by difference (domainindex) to a list dnsmasq reads packed several names a
    line: a parent added covers its listed subdomains, a parent removed leaves them blocked on their own,
    a whitelisted subdomain under a blocked parent is not sinkholed, and nothing else is blocked."""
    many = [f"n{i}.many.test" for i in range(300)]
    base = ["sinkholed.test", *many, "a.ads.test", "b.c.ads.test"]
    plane.apply(_policy(domain_blacklist=base))
    assert [_resolve(plane.dns, n) for n in ("n0.many.test", "x.n299.many.test", "b.c.ads.test")] == [["0.0.0.0"]] * 3
    assert _resolve(plane.dns, "other.ads.test") == []
    plane.apply(_policy(domain_blacklist=[*base, "ads.test"], domain_whitelist=["ok.ads.test"]))
    assert (plane.root / "acl" / "domain_blacklist.txt").read_text().count("ads.test") == 1  # the parent covers both
    assert _resolve(plane.dns, "other.ads.test") == ["0.0.0.0"]
    assert _resolve(plane.dns, "ok.ads.test") == []  # the whitelist wins over the blocked parent
    plane.apply(_policy(domain_blacklist=[n for n in base if n != "a.ads.test"]))
    assert _resolve(plane.dns, "other.ads.test") == [] and _resolve(plane.dns, "a.ads.test") == []
    assert _resolve(plane.dns, "deep.b.c.ads.test") == ["0.0.0.0"]  # listed on its own, still blocked
    assert _resolve(plane.dns, "n150.many.test") == ["0.0.0.0"]
    plane.apply(_policy())
    assert _resolve(plane.dns, "n150.many.test") == []


def test_a_restart_is_a_new_squid_on_the_same_port(plane, origin):
    before = plane.status()
    after = plane.restart_squid()
    assert after["squid_pid"] != before["squid_pid"] and after["port"] == before["port"]
    assert after["started_at"] > before["started_at"]
    assert not _alive(before["squid_pid"])
    with _proxy(plane) as client:
        assert client.get(f"http://allowed.test:{origin}/page.txt").status_code == 200


def test_stop_ends_both_processes_and_the_watchdog(tmp_path):
    require_dataplane()
    plane = DataPlane(tmp_path, ProxySettings(hosts=HOSTS))
    plane.start(Policy())
    squid, dnsmasq, watchdog = plane.squid.pid, plane.dnsmasq.pid, plane.watchdog
    plane.stop()
    assert not _alive(squid) and not _alive(dnsmasq) and watchdog.poll() is not None
    assert plane.status()["running"] is False and plane.reload_dns() is False
    with pytest.raises(DataPlaneError, match="not running"):
        plane.reconfigure(check=False)


def test_the_watchdog_stops_squid_and_dnsmasq_when_their_owner_is_killed(tmp_path):
    """Squid and dnsmasq change credentials, which clears PR_SET_PDEATHSIG: the watchdog covers a SIGKILL."""
    require_dataplane()
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path\n"
            "from actors.webfilter.dataplane import DataPlane, ProxySettings\n"
            "from actors.webfilter.squidconf import Policy\n"
            "plane = DataPlane(Path(sys.argv[1]), ProxySettings())\n"
            "plane.start(Policy())\n"
            "print(plane.squid.pid, plane.dnsmasq.pid, flush=True)\n"
            "time.sleep(120)\n",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        text=True,
    )
    try:
        assert owner.stdout is not None
        squid, dnsmasq = (int(p) for p in owner.stdout.readline().split())
        assert _alive(squid) and _alive(dnsmasq)
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        eventually_sync(lambda: not _alive(squid) and not _alive(dnsmasq), timeout=15, what="squid and dnsmasq gone")
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


def test_a_configuration_squid_refuses_is_an_error_with_squids_words(tmp_path):
    require_dataplane()
    squid = _script(tmp_path, "squid", 'echo "2026/11/26 FATAL: Bungled squid.conf line 3" >&2\nexit 1\n')
    plane = DataPlane(tmp_path / "state", ProxySettings(squid_bin=squid))
    try:
        with pytest.raises(DataPlaneError, match="refused the configuration: .*FATAL: Bungled squid.conf line 3"):
            plane.start(Policy())
        assert plane.squid is None  # never spawned
    finally:
        plane.stop()
    assert plane.dnsmasq is None


def test_a_squid_that_dies_at_start_is_an_error_and_leaves_nothing_running(tmp_path):
    require_dataplane()
    squid = _script(tmp_path, "squid", 'case "$*" in *parse*) exit 0 ;; esac\nexit 3\n')
    plane = DataPlane(tmp_path / "state", ProxySettings(squid_bin=squid))
    with pytest.raises(DataPlaneError, match="squid did not start"):
        plane.start(Policy())
    assert plane.squid is None and plane.dnsmasq is None and plane.watchdog is None


def test_a_squid_that_never_listens_again_after_the_signal_fails_the_reconfigure(tmp_path):
    """A stand-in Squid that listens, then dies on SIGHUP: the reconfigure reports it."""
    require_dataplane()
    listener = tmp_path / "listen.py"
    listener.write_text(
        "import signal, socket, sys\n"
        "conf = open(sys.argv[sys.argv.index('-f') + 1]).read()\n"
        "open(conf.split('cache_log ')[1].split()[0], 'a').close()\n"
        "port = int(conf.split('http_port 127.0.0.1:')[1].split()[0])\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind(('127.0.0.1', port)); s.listen()\n"
        "signal.signal(signal.SIGHUP, lambda *_: sys.exit(4))\n"
        "while True: s.accept()[0].close()\n"
    )
    squid = _script(tmp_path, "squid", f'case "$*" in *parse*) exit 0 ;; esac\nexec {sys.executable} {listener} "$@"\n')
    plane = DataPlane(tmp_path / "state", ProxySettings(squid_bin=squid))
    try:
        plane.start(Policy())
        # a dead Squid ends the wait at once, with its own message, not the timeout's
        with pytest.raises(DataPlaneError, match="squid exited during reconfigure"):
            plane.reconfigure(check=True)
        assert not plane.running()
    finally:
        plane.stop()


def test_atomic_writes_report_whether_the_content_changed(tmp_path):
    path = tmp_path / "f.txt"
    assert _write_atomic(path, "a\n") is True
    assert _write_atomic(path, "a\n") is False
    assert _write_atomic(path, "b\n") is True and path.read_text() == "b\n"
    assert oct(path.stat().st_mode & 0o777) == "0o644"  # readable by Squid's user
    assert not (tmp_path / "f.txt.tmp").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root process hands the folder to Squid's user")
def test_a_folder_squids_user_cannot_reach_moves_to_a_private_one_that_stop_removes(tmp_path):
    hidden = tmp_path / "private"
    hidden.mkdir(mode=0o700)
    os.chmod(hidden, 0o700)
    plane = DataPlane(hidden / "proxy", ProxySettings())
    assert plane.fallback and plane.root != hidden / "proxy"
    assert "rayfleet-webfilter" in str(plane.root) and plane.root.is_dir()
    assert str(plane.root) in (hidden / "proxy" / "MOVED").read_text()
    plane.stop()
    assert not plane.root.exists()


def test_dnsmasq_gets_a_loopback_address_whose_port_53_is_free():
    address = free_dns_address()
    assert address.startswith("127.53.")


# --- supervision: Squid and dnsmasq are children of rayfleet.supervisor ---------------------------------


@contextlib.contextmanager
def supervised(folder: Path) -> Iterator[DataPlane]:
    """A plane of its own whose children wait a second before a restart (time to act while one is down)."""
    require_dataplane()
    slow = RestartPolicy(initial_backoff=1.0, max_backoff=1.0, burst=10, window=60.0, probe_interval=0.5)
    running = DataPlane(folder, ProxySettings(hosts=HOSTS), policy=slow)
    running.start(_policy())
    try:
        yield running
    finally:
        running.stop()


def _child(plane: DataPlane, name: str) -> dict:
    return dict(next(c for c in plane.children() if c["name"] == name))


def test_a_squid_killed_with_sigkill_is_restarted_on_the_same_port_with_the_policy_applied_meanwhile(tmp_path, origin):
    with supervised(tmp_path) as plane:
        _squid_comes_back(plane, origin)


def _squid_comes_back(plane: DataPlane, origin: int) -> None:
    port, pid = plane.port, plane.squid.pid
    os.kill(pid, signal.SIGKILL)
    eventually_sync(lambda: _child(plane, "squid")["state"] == "backoff", what="the supervisor saw Squid die")
    assert not plane.running()
    # an edit while Squid is down is written, and the restarted Squid enforces it
    plane.apply(_policy(domain_blacklist=["sinkholed.test", "allowed.test"]))
    eventually_sync(plane.running, timeout=10, what="Squid restarted by its supervisor")
    status = plane.status()
    assert status["port"] == port and status["squid_pid"] != pid
    child = _child(plane, "squid")
    assert child["restarts"] == 1 and child["last_exit"] == -signal.SIGKILL
    assert child["last_exit_reason"] == "killed by SIGKILL"
    with _proxy(plane) as client:
        assert client.get(f"http://allowed.test:{origin}/page.txt").status_code == 403
        assert client.get(f"http://127.0.0.1:{origin}/page.txt").status_code == 200


def test_a_killed_dnsmasq_comes_back_on_its_address_with_the_current_sinkhole(tmp_path):
    with supervised(tmp_path) as plane:
        _dnsmasq_comes_back(plane)


def _dnsmasq_comes_back(plane: DataPlane) -> None:
    address, pid = plane.dns, plane.dnsmasq.pid
    os.kill(pid, signal.SIGKILL)
    eventually_sync(lambda: _child(plane, "dnsmasq")["restarts"] == 1, timeout=10, what="dnsmasq restarted")
    eventually_sync(lambda: plane.dnsmasq is not None, timeout=10, what="dnsmasq running again")
    assert plane.dns == address and plane.dnsmasq.pid != pid
    assert _child(plane, "dnsmasq")["last_exit"] == -signal.SIGKILL
    assert _resolve(address, "sinkholed.test") == ["0.0.0.0"]  # the current blocklist
    assert _resolve(address, "allowed.test") == ["127.0.0.1"]


def _killed_owner(
    code: str, folder: Path, before_kill: Callable[[str], str] = lambda line: ""
) -> tuple[list[str], str]:
    """Run `code` (an owner of `folder`, which prints one line) in a process of its own, then SIGKILL it as
    Ray's restart of a dead actor would find it; returns the printed line's words and what `before_kill`
    read (given the line) while the owner was still alive."""
    owner = subprocess.Popen(
        [sys.executable, "-c", f"import sys\n{code}sys.stdin.read()\n", str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        text=True,
    )
    assert owner.stdout is not None
    line = owner.stdout.readline()
    read = before_kill(line)
    owner.send_signal(signal.SIGKILL)
    owner.wait(timeout=10)
    return line.split(), read


def test_a_restarted_owner_ends_what_its_killed_predecessor_left_and_takes_the_same_port(tmp_path):
    """The proxy actor restarted (its process killed): the new one must not get a new port."""
    require_dataplane()
    folder = tmp_path / "plane"
    (port, dns, squid, root), old_watchdog = _killed_owner(
        "from pathlib import Path\n"
        "from actors.webfilter.dataplane import DataPlane, ProxySettings\n"
        "from actors.webfilter.squidconf import Policy\n"
        "plane = DataPlane(Path(sys.argv[1]), ProxySettings())\n"
        "plane.start(Policy())\n"
        "print(plane.port, plane.dns, plane.squid.pid, plane.root, flush=True)\n",
        folder,
        before_kill=lambda line: (Path(line.split()[3]) / "run" / "watchdog.pid").read_text(),
    )
    successor = DataPlane(folder, ProxySettings())
    try:
        successor.start(Policy())  # at once: before the old watchdog's next look
        assert successor.root == Path(root)  # the same folder, even when it is the private fallback
        assert (successor.port, successor.dns) == (int(port), dns)
        assert not _alive(int(squid)) and successor.running()
        assert successor.squid.pid != int(squid)
        assert not _alive(int(old_watchdog))  # ended, so it cannot kill the new Squid by the shared pid file
    finally:
        successor.stop()


def test_a_restarted_proxy_actor_serves_the_last_policy_on_the_same_port_before_any_call(tmp_path):
    """Ray restarts the proxy actor after its process died: it must not wait for the next edit."""
    require_dataplane()
    folder = state_folder()
    (port, dns), _ = _killed_owner(
        "from actors.webfilter.dataplane import ProxySettings\n"
        "from actors.webfilter.proxy import ProxyOwner\n"
        "from actors.webfilter.squidconf import Policy\n"
        "owner = ProxyOwner(sys.argv[1], ProxySettings(hosts={'allowed.test': '127.0.0.1'}))\n"
        "status = owner.ensure(Policy(domain_blacklist=['sinkholed.test']))\n"
        "print(status['port'], status['dns'], flush=True)\n",
        folder,
    )
    restarted = ProxyOwner(str(folder), ProxySettings(hosts=HOSTS))
    try:
        status = restarted.status()
        assert status["running"] and status["dns_running"]
        assert (status["port"], status["dns"]) == (int(port), dns)
        assert _resolve(dns, "sinkholed.test") == ["0.0.0.0"]
    finally:
        restarted.stop()
        shutil.rmtree(folder, ignore_errors=True)


# --- a blocklist edit that only adds names: base + delta, no restart (issue 22) --------------------------


@contextlib.contextmanager
def delta_upstream(folder: Path) -> Iterator[str]:
    """The test's upstream resolver: a dnsmasq on loopback answering every name under up.test 127.0.0.5."""
    port = free_port()
    conf = folder / "upstream.conf"
    conf.write_text(
        f"port={port}\nlisten-address=127.0.0.1\nbind-interfaces\nno-resolv\nno-hosts\n"
        f"address=/up.test/127.0.0.5\npid-file={folder / 'upstream.pid'}\n"
    )
    child = subprocess.Popen(["/usr/sbin/dnsmasq", "-k", "-C", str(conf)], stderr=subprocess.DEVNULL)
    try:
        eventually_sync(
            lambda: _resolve_at("127.0.0.1", port, "a.up.test", timeout=0.5) == ["127.0.0.5"],
            ignore=(OSError, dns.exception.Timeout),
            what="the test's upstream answers",
        )
        yield f"127.0.0.1#{port}"
    finally:
        child.terminate()
        child.wait(timeout=10)


def _resolve_at(server: str, port: int, name: str, qtype: str = "A", timeout: float = 2) -> list[str]:
    answer = dns.query.udp(dns.message.make_query(name, qtype), server, port=port, timeout=timeout)
    return [item.address for rrset in answer.answer for item in rrset]


class _Asker(threading.Thread):
    """A client asking the resolver for an allowed name back to back: every query must be answered."""

    def __init__(self, server: str, name: str) -> None:
        super().__init__(daemon=True)
        self.server, self.name = server, name
        self.answered = 0
        self.failed: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                answer = _resolve_at(self.server, 53, self.name, timeout=1)
            except Exception as exc:  # a timeout: a query lost
                self.failed.append(repr(exc))
                continue
            if answer == ["127.0.0.5"]:
                self.answered += 1
            else:
                self.failed.append(repr(answer))


@contextlib.contextmanager
def _delta_plane(folder: Path, **changes: object) -> Iterator[tuple[DataPlane, Callable[..., Policy]]]:
    require_dataplane()
    with delta_upstream(folder) as upstream:

        def policy(**more: object) -> Policy:
            return _policy(dns_upstreams=[upstream], **{**changes, **more})

        running = DataPlane(folder / "plane", ProxySettings(hosts=HOSTS))
        running.start(policy())
        try:
            yield running, policy
        finally:
            running.stop()


def test_an_add_only_blocklist_edit_reloads_dnsmasq_in_place_and_every_query_is_answered(tmp_path):
    with _delta_plane(tmp_path) as (plane, policy):
        pid = plane.dnsmasq.pid
        asker = _Asker(plane.dns, "ok.up.test")
        asker.start()
        try:
            eventually_sync(lambda: asker.answered > 5, what="queries answered before the edit")
            result = plane.apply(policy(domain_blacklist=["sinkholed.test", "bad.up.test"]))
            mark = asker.answered
            eventually_sync(lambda: asker.answered > mark + 5, what="queries answered after the edit")
        finally:
            asker.halt.set()
            asker.join(timeout=10)
        assert asker.failed == []
        assert result["dns_restarted"] is False and result["dns_reloaded"] is True
        assert plane.dnsmasq.pid == pid
        assert _resolve(plane.dns, "bad.up.test") == ["0.0.0.0"]
        assert _resolve(plane.dns, "deep.sub.bad.up.test") == ["0.0.0.0"]
        assert _resolve_at(plane.dns, 53, "bad.up.test", "AAAA") == ["::"]
        assert _resolve(plane.dns, "ok.up.test") == ["127.0.0.5"]  # through the test's upstream
        assert _resolve(plane.dns, "sinkholed.test") == ["0.0.0.0"]  # the base still holds
        # a second add-only edit still reloads, and so does the removal of a name added since the start
        more = plane.apply(policy(domain_blacklist=["sinkholed.test", "bad.up.test", "worse.up.test"]))
        assert more["dns_reloaded"] is True and more["dns_delta"] == 2 and plane.dnsmasq.pid == pid
        assert _resolve(plane.dns, "worse.up.test") == ["0.0.0.0"]
        fewer = plane.apply(policy(domain_blacklist=["sinkholed.test", "worse.up.test"]))
        assert fewer["dns_reloaded"] is True and plane.dnsmasq.pid == pid
        assert _resolve(plane.dns, "bad.up.test") == ["127.0.0.5"]  # no longer blocked: the upstream answers
        # the removal of a base name restarts dnsmasq on a new base, which holds the delta's names
        removed = plane.apply(policy(domain_blacklist=["worse.up.test"]))
        assert removed["dns_restarted"] is True and removed["dns_delta"] == 0 and plane.dnsmasq.pid != pid
        assert _resolve(plane.dns, "sinkholed.test") == []
        assert _resolve(plane.dns, "worse.up.test") == ["0.0.0.0"]
        assert "up.test" not in (plane.root / "dns" / "delta.conf").read_text()
        # a settings change restarts too
        assert plane.apply(policy(domain_blacklist=["worse.up.test"], dns_block_mode="nxdomain"))["dns_restarted"]


def test_an_added_name_over_a_whitelisted_one_restarts_so_the_whitelist_still_wins(tmp_path):
    with _delta_plane(tmp_path, domain_whitelist=["fine.bad.up.test"]) as (plane, policy):
        pid = plane.dnsmasq.pid
        result = plane.apply(policy(domain_blacklist=["sinkholed.test", "bad.up.test"]))
        assert result["dns_restarted"] is True and plane.dnsmasq.pid != pid
        assert _resolve(plane.dns, "bad.up.test") == ["0.0.0.0"]
        assert _resolve(plane.dns, "fine.bad.up.test") == ["127.0.0.5"]


def test_an_add_only_edit_in_nxdomain_mode_answers_nxdomain_without_a_restart(tmp_path):
    with _delta_plane(tmp_path, dns_block_mode="nxdomain") as (plane, policy):
        pid = plane.dnsmasq.pid
        result = plane.apply(policy(domain_blacklist=["sinkholed.test", "bad.up.test"]))
        assert result["dns_reloaded"] is True and plane.dnsmasq.pid == pid
        for name in ("bad.up.test", "x.bad.up.test"):
            answer = dns.query.udp(dns.message.make_query(name, "A"), plane.dns, timeout=2)
            assert answer.rcode() == dns.rcode.NXDOMAIN
        assert _resolve(plane.dns, "ok.up.test") == ["127.0.0.5"]


def test_a_killed_sinkhole_comes_back_and_delta_names_are_sinkholed_again(tmp_path):
    with _delta_plane(tmp_path) as (plane, policy):
        plane.apply(policy(domain_blacklist=["sinkholed.test", "bad.up.test"]))
        sinkhole = _child(plane, "dnsmasq-sinkhole")
        pid = plane.sinkhole.pid
        os.kill(pid, signal.SIGKILL)
        eventually_sync(
            lambda: _child(plane, "dnsmasq-sinkhole")["restarts"] == sinkhole["restarts"] + 1,
            timeout=10,
            what="the sinkhole restarted",
        )
        eventually_sync(lambda: plane.sinkhole is not None and plane.sinkhole.pid != pid, timeout=10)
        eventually_sync(
            lambda: _resolve(plane.dns, "bad.up.test", timeout=0.5) == ["0.0.0.0"],
            ignore=(dns.exception.Timeout,),
            what="the delta name sinkholed again",
        )
        assert _resolve(plane.dns, "ok.up.test") == ["127.0.0.5"]
        restarted = plane.sinkhole.pid
    assert not _alive(restarted)  # stopped with the plane


def _servers(plane: DataPlane) -> list[str]:
    return [ln for ln in (plane.root / "dns" / "dnsmasq.conf").read_text().splitlines() if ln.startswith("server=")]


@pytest.mark.skipif(shutil.which("unbound") is None, reason="unbound not installed (system-deps.sh)")
def test_tls_upstreams_run_a_supervised_forwarder_that_a_refused_candidate_never_touches(plane):
    """A `tls://` upstream starts the forwarder (a supervised child) and dnsmasq forwards only to it; a candidate
    Squid refuses neither starts it nor changes it; killed, it is back on its port; plain again, it stops.
    The upstream is on loopback and nothing asks a name here: no query leaves for it."""
    tls = ["tls://127.0.0.1:9#dns.example"]
    bad_ip = ["192.0.2.1", "1.2.3.4/99"]  # passes validation, refused by Squid's parse
    with pytest.raises(DataPlaneError, match="last good configuration keeps running"):
        plane.apply(_policy(dns_upstreams=tls, ip_blacklist=bad_ip))
    assert plane.status()["dns_dot"] is None and _servers(plane) == []
    assert plane.supervisor is not None and "unbound-dot" not in plane.supervisor.children
    try:
        plane.apply(_policy(dns_upstreams=tls))
        dot = plane.status()["dns_dot"]
        assert dot is not None and dot["running"] and dot["upstreams"] == tls
        assert _servers(plane) == [f"server={plane.dot_address}"]
        conf = (plane.root / "dns" / "unbound.conf").read_text()
        assert "forward-addr: 127.0.0.1@9#dns.example" in conf and "tls-cert-bundle" in conf
        with pytest.raises(DataPlaneError, match="last good configuration keeps running"):
            plane.apply(_policy(dns_upstreams=["tls://127.0.0.1:9#other.example"], ip_blacklist=bad_ip))
        assert plane.status()["dns_dot"]["pid"] == dot["pid"]
        assert (plane.root / "dns" / "unbound.conf").read_text() == conf
        os.kill(dot["pid"], signal.SIGKILL)
        eventually_sync(
            lambda: (plane.status()["dns_dot"] or {}).get("pid") not in (None, dot["pid"]),
            timeout=15,
            what="the forwarder restarted",
        )
        assert plane.status()["dns_dot"]["forwarder"] == dot["forwarder"]  # the same port
    finally:
        plane.apply(_policy())
    assert plane.status()["dns_dot"] is None and _servers(plane) == []
    assert "unbound-dot" not in plane.supervisor.children
