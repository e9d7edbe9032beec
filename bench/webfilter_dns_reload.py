"""Web filter, DNS: what a blocklist edit costs dnsmasq 2.90 under three ways of loading the list, same run.

Each way runs standalone dnsmasq processes on 127.0.0.x (an upstream that answers `allowed.bench.test`, a
sinkhole that answers every name 0.0.0.0 / ::, and the resolver under test, which logs nothing). A client
thread asks the resolver for the allowed name (forwarded to the upstream) in a loop during each edit; an
edit is timed from its start until the edited name answers 0.0.0.0, and the loop's queries without an
answer (refused socket or no reply within `--timeout`) are counted from the edit's start until 0.2 s after.

  * restart (what the data plane does today): the list as `address=/name/#` lines, 16 names a line, in a
    conf-file, which dnsmasq reads only at start; an edit rewrites it and the process is killed and started
    again (what the supervisor's restart does).
  * servers-file (the design proposed for issue 22): every blocked name as `server=/name/<sinkhole>` in a
    `servers-file`, which dnsmasq re-reads on SIGHUP. Measured at `--server-sizes`: the cold start, the
    SIGHUP that loads the list into a running dnsmasq (from an empty file) and one edit (N -> N+1 names).
  * base + delta: the list as `address=` lines read at start (as today) plus a servers-file holding only the
    names blocked since (`server=/name/<sinkhole>`); an edit rewrites the small file and sends SIGHUP.
    Also checked: whether `server=/name/#` in the servers-file undoes a base `address=/name/#` (it would
    let a removal skip the restart too), what a local-only `server=/name/` (no address) answers, and whether
    a whitelisted `server=/ok.name/#` wins under a name blocked in the servers-file.

Usage:  python bench/webfilter_dns_reload.py [--entries 200000] [--edits 5] [--server-sizes 8000,32000,64000]
Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

DNSMASQ = "/usr/sbin/dnsmasq"
HOST = "127.0.0.97"
UPSTREAM, SINKHOLE, RESOLVER = 5391, 5392, 5393
ALLOWED = "allowed.bench.test"
PER_LINE = 16


def ask(name: str, port: int = RESOLVER, timeout: float = 0.5) -> list[str]:
    reply = dns.query.udp(dns.message.make_query(name, dns.rdatatype.A), HOST, port=port, timeout=timeout)
    return [item.to_text() for rrset in reply.answer for item in rrset]


def sinkholed(name: str) -> bool:
    try:
        return ask(name, timeout=0.05) == ["0.0.0.0"]
    except Exception:  # not listening (restarting) or busy reading its list
        return False


def conf(folder: Path, name: str, port: int, *extra: str) -> Path:
    path = folder / f"{name}.conf"
    lines = [f"port={port}", f"listen-address={HOST}", "bind-interfaces", "no-resolv", "no-hosts", "pid-file="]
    path.write_text("\n".join([*lines, "user=root" if os.geteuid() == 0 else "", *extra]) + "\n")
    return path


def spawn(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([DNSMASQ, "-k", "-C", str(path)], stderr=subprocess.DEVNULL)


def wait_answer(name: str, want: list[str] | None = None, limit: float = 600, port: int = RESOLVER) -> float:
    """Seconds until `name` answers (`want`, when given) on `port`, polled every 5 ms."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        try:
            answer = ask(name, port, timeout=0.05)
            if want is None or answer == want:
                return time.monotonic() - started
        except Exception:
            pass
        time.sleep(0.005)
    raise RuntimeError(f"{name} did not answer {want} within {limit} s")


def address_lines(names: list[str]) -> str:
    return "".join(f"address=/{'/'.join(names[i : i + PER_LINE])}/#\n" for i in range(0, len(names), PER_LINE))


def server_lines(names: list[str]) -> str:
    return "".join(
        f"server=/{'/'.join(names[i : i + PER_LINE])}/{HOST}#{SINKHOLE}\n" for i in range(0, len(names), PER_LINE)
    )


class Loop:
    """A client asking the resolver for the allowed name back to back: when each query was sent, and
    whether it was answered (a refused socket or no reply within `timeout` is not)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.sent: list[tuple[float, bool]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            at = time.monotonic()
            try:
                ok = ask(ALLOWED, timeout=self.timeout) == ["10.9.9.9"]
            except Exception:
                ok = False
                time.sleep(0.005)  # a refused socket answers at once: do not spin
            self.sent.append((at, ok))

    def between(self, start: float, end: float) -> tuple[int, int]:
        """Unanswered and all queries sent in [start, end], once every one of them has its outcome."""
        while not self.sent or self.sent[-1][0] <= end:
            time.sleep(0.01)
        window = [ok for at, ok in self.sent if start <= at <= end]
        return window.count(False), len(window)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def edit(loop: Loop, act: Callable[[], None], name: str) -> tuple[float, int, int]:
    """Run `act` (rewrite and signal or restart) under the loop: seconds to `name` sinkholed, and the loop's
    unanswered and all queries sent from the edit's start until 0.2 s after that."""
    started = time.monotonic()
    act()
    while not sinkholed(name):
        if time.monotonic() - started > 600:
            raise RuntimeError(f"{name} not sinkholed within 600 s")
        time.sleep(0.005)
    took = time.monotonic() - started
    return (took, *loop.between(started, started + took + 0.2))


def report(label: str, runs: list[tuple[float, int, int]]) -> None:
    took = [r[0] for r in runs]
    missed, asked = sum(r[1] for r in runs), sum(r[2] for r in runs)
    print(
        f"{label}: edit -> sinkholed median {statistics.median(took) * 1000:.0f} ms, max {max(took) * 1000:.0f} ms "
        f"over {len(runs)} edits; allowed-name queries unanswered during edits {missed}/{asked} "
        f"({100 * missed / max(asked, 1):.1f} %)",
        flush=True,
    )


def restart_way(folder: Path, names: list[str], edits: int, timeout: float) -> None:
    blocklist = folder / "blocklist.conf"
    blocklist.write_text(address_lines(names))
    path = conf(folder, "restart", RESOLVER, f"server={HOST}#{UPSTREAM}", f"conf-file={blocklist}")
    child = [spawn(path)]
    print(f"restart: cold start with {len(names)} address= names {wait_answer(ALLOWED):.2f} s", flush=True)
    loop, runs = Loop(timeout), []
    try:
        for n in range(edits):
            name = f"late{n}.bench.test"

            def act(name: str = name) -> None:
                blocklist.write_text(address_lines([*names, name]))
                child[0].kill()
                child[0].wait()
                child[0] = spawn(path)

            runs.append(edit(loop, act, name))
    finally:
        loop.close()
        child[0].kill()
        child[0].wait()
    report("restart", runs)


def servers_file_way(folder: Path, sizes: list[int], timeout: float) -> None:
    servers = folder / "servers.conf"
    path = conf(folder, "resolver", RESOLVER, f"server={HOST}#{UPSTREAM}", f"servers-file={servers}")
    for size in sizes:
        names = [f"d{i}.bench.test" for i in range(size)]
        servers.write_text(server_lines(names))
        child = spawn(path)
        cold = wait_answer(f"x.{names[-1]}", ["0.0.0.0"])
        child.kill()
        child.wait()
        servers.write_text("")
        child = spawn(path)
        wait_answer(ALLOWED)
        loop = Loop(timeout)
        try:
            servers.write_text(server_lines([*names, "load.bench.test"]))
            load = edit(loop, lambda: os.kill(child.pid, signal.SIGHUP), "load.bench.test")
            servers.write_text(server_lines([*names, "load.bench.test", "late.bench.test"]))
            one = edit(loop, lambda: os.kill(child.pid, signal.SIGHUP), "late.bench.test")
        finally:
            loop.close()
            child.kill()
            child.wait()
        print(
            f"servers-file at {size} names: cold start {cold:.2f} s; SIGHUP loading them {load[0]:.2f} s "
            f"(unanswered {load[1]}/{load[2]}); one-name edit {one[0] * 1000:.0f} ms (unanswered {one[1]}/{one[2]})",
            flush=True,
        )


def delta_way(folder: Path, names: list[str], edits: int, timeout: float) -> None:
    base, delta = folder / "base.conf", folder / "delta.conf"
    base.write_text(address_lines(names))
    delta.write_text("")
    path = conf(folder, "delta", RESOLVER, f"server={HOST}#{UPSTREAM}", f"conf-file={base}", f"servers-file={delta}")
    child = spawn(path)
    print(f"base + delta: cold start with {len(names)} address= names {wait_answer(ALLOWED):.2f} s", flush=True)
    loop, runs, added = Loop(timeout), [], []
    try:
        for n in range(edits):
            name = f"late{n}.bench.test"
            added = [name]  # as bench/webfilter_dns.py: each edit adds one name and drops the previous edit's

            def act(lines: str = server_lines(added)) -> None:
                delta.write_text(lines)
                os.kill(child.pid, signal.SIGHUP)

            runs.append(edit(loop, act, name))
        report("base + delta", runs)
        undo = names[5]
        delta.write_text(f"server=/{undo}/#\n")
        os.kill(child.pid, signal.SIGHUP)
        wait_answer("late0.bench.test", [], limit=10)  # the SIGHUP was read: late0 is no longer in the delta
        print(f"base + delta: server=/{undo}/# over a base address=/{undo}/#: {undo} answers {ask(undo)}", flush=True)
        delta.write_text("server=/nx.bench.test/\n")  # a local-only domain: NXDOMAIN mode needs no sinkhole
        os.kill(child.pid, signal.SIGHUP)
        wait_answer(f"late{edits - 1}.bench.test", [], limit=10)
        reply = dns.query.udp(dns.message.make_query("a.nx.bench.test", dns.rdatatype.A), HOST, port=RESOLVER)
        print(f"base + delta: server=/nx.bench.test/ (no address): a.nx.bench.test answers "
              f"{dns.rcode.to_text(reply.rcode())}", flush=True)  # fmt: skip
        # a whitelisted name under a domain blocked in the delta: the more specific `server=/name/#` wins
        delta.write_text(f"server=/wl.bench.test/{HOST}#{SINKHOLE}\nserver=/ok.wl.bench.test/#\n")
        os.kill(child.pid, signal.SIGHUP)
        wait_answer("x.wl.bench.test", ["0.0.0.0"], limit=10)
        print(f"base + delta: server=/ok.wl.bench.test/# under server=/wl.bench.test/<sinkhole>: ok.wl.bench.test "
              f"answers {ask('ok.wl.bench.test')}, x.ok.wl.bench.test {ask('x.ok.wl.bench.test')}", flush=True)  # fmt: skip
    finally:
        loop.close()
        child.kill()
        child.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--server-sizes", default="8000,32000,64000")
    parser.add_argument("--timeout", type=float, default=0.25, help="a query without an answer by then is missed")
    args = parser.parse_args()
    names = [f"d{i}.bench.test" for i in range(args.entries)]
    with tempfile.TemporaryDirectory(prefix="wf-dns-reload-") as tmp:
        folder = Path(tmp)
        upstream = spawn(
            conf(folder, "upstream", UPSTREAM, f"address=/{ALLOWED}/10.9.9.9", "address=/ok.wl.bench.test/10.9.9.8")
        )
        sinkhole = spawn(conf(folder, "sinkhole", SINKHOLE, "address=/#/0.0.0.0", "address=/#/::"))
        try:
            wait_answer(ALLOWED, ["10.9.9.9"], limit=10, port=UPSTREAM)
            wait_answer("any.bench.test", ["0.0.0.0"], limit=10, port=SINKHOLE)
            restart_way(folder, names, args.edits, args.timeout)
            delta_way(folder, names, args.edits, args.timeout)
            servers_file_way(folder, [int(s) for s in args.server_sizes.split(",")], args.timeout)
        finally:
            for child in (upstream, sinkhole):
                child.kill()
                child.wait()
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
