"""Per-group DNS: a client group's own lists answered by a dnsmasq of its own, reached by steering.

A source-network group with domain rules dnsmasq can hold (names and `*.name`; `/regex/` rules are the
proxy's alone) gets a *view*: a dnsmasq answering on every `dns_listen` address at a port of its own, with
the blocklist of the group's lists merged with the global ones the way Squid orders them (the group's
whitelist wins over everything, the group's blacklist over the global whitelist, the global whitelist over
the global blacklist). Queries that reach port 53 of a `dns_listen` address from one of the group's
networks are steered to that port by an nftables table the web filter owns (`table inet <table>`, one per
state folder, replaced whole in one nft transaction, deleted at stop; no other table is touched):

- `guard` (prerouting, before NAT): a query to a `dns_listen` address whose source is not routed back
  through the interface it came in on is dropped (a strict reverse-path check for our resolver only), so
  a client elsewhere cannot claim a group's address, nor a group's client another network's;
- `steer` / `steer_local` (NAT prerouting and output): `saddr` in the group's networks (and, for a group
  with time windows, inside one of them: nft `meta day` and `meta hour`, the node's local time as Squid's
  `time` ACL) → DNAT to the same address at the view's port; a group with windows and a whitelist then has
  the same rules without the time matches to its *outside* view (the global lists with its whitelist, which
  Squid applies at all times). Groups do not overlap (the API refuses it); the rules are in the groups'
  order, and the first DNAT wins;
- `direct` (input): a query arriving from outside the host at a view's port without having been steered
  there is dropped (a client outside the group cannot ask the group's view, and its whitelist, directly).

A wildcard `dns_listen` (`0.0.0.0`, `::`) means every address of this node, of both families (dnsmasq's
wildcard mode, `squidconf.wildcard`): the guard and the steering match any destination that is local to
this node (`fib daddr type local`) instead of a list,
and the steering is `redirect to :<port>` (nft rewrites the destination to the address of the interface
the query came in on, or to loopback for this host's own processes) to a view that listens on the
wildcard address. A query from a network never has a loopback destination steered (it would be martian:
redirected it would become deliverable), and Squid's own resolver address (`own`) is never steered.
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import shutil
import subprocess
from dataclasses import dataclass

from actors.webfilter.domainindex import normal
from actors.webfilter.grouprules import GroupPolicy
from actors.webfilter.squidconf import Policy, wildcard

NFT_DAYS = {"mon": "Monday", "tue": "Tuesday", "wed": "Wednesday", "thu": "Thursday"}
NFT_DAYS |= {"fri": "Friday", "sat": "Saturday", "sun": "Sunday"}


class GroupDnsError(RuntimeError):
    """nft is missing or refused the table."""


@dataclass(frozen=True)
class View:
    """One group's DNS: its name, networks and windows (for steering) and the policy its dnsmasq renders.
    `outside`: the view a group with time windows and a whitelist gets for the rest of the time (steered
    after the in-window one, at any time)."""

    group: str
    networks: tuple[str, ...]
    windows: tuple[tuple[tuple[str, ...], str, str], ...]
    policy: Policy
    outside: bool = False

    @property
    def key(self) -> str:
        """What names the view's dnsmasq, files and port (a group name never holds a dot)."""
        return f"{self.group}.outside" if self.outside else self.group


def _dns_rules(rules: list[str]) -> list[str]:
    return [normal(r) if not r.startswith("*.") else r.lower() for r in rules if not r.startswith("/")]


def _covered(rule: str, names: set[str], wild: set[str]) -> bool:
    """Does a blacklist of plain `names` and `*.name` rules (`wild`: the names after `*.`) cover `rule`?"""
    name = rule.removeprefix("*.")
    labels = name.split(".")
    suffixes = [".".join(labels[i:]) for i in range(len(labels))]
    return (
        any(s in names for s in suffixes)
        or any(s in wild for s in suffixes[1:])
        or (rule.startswith("*.") and name in wild)
    )


def group_policy(policy: Policy, group: GroupPolicy) -> Policy:
    """The policy a group's dnsmasq renders: blacklist = the group's plus the global one (when enabled);
    whitelist = the group's plus the global entries the group's blacklist does not cover (Squid's order:
    the group's whitelist, then its blacklist, then the global whitelist, then the global blacklist)."""
    black = _dns_rules(group["blacklist"])
    names = {r for r in black if not r.startswith("*.")}
    wild = {r[2:] for r in black if r.startswith("*.")}
    global_white = [r for r in _dns_rules(policy.domain_whitelist) if not _covered(r, names, wild)]
    global_black = list(policy.domain_blacklist) if policy.enable_domain_blacklist else []
    return dataclasses.replace(
        policy,
        domain_blacklist=list(dict.fromkeys([*black, *global_black])),
        domain_whitelist=list(dict.fromkeys([*_dns_rules(group["whitelist"]), *global_white])),
        enable_domain_blacklist=True,
        groups=[],
    )


def outside_policy(policy: Policy, group: GroupPolicy) -> Policy:
    """What a group with time windows renders outside them: its blacklist is off (as Squid's `time` ACL
    leaves it), its whitelist still wins over the global blacklist (Squid's order)."""
    return dataclasses.replace(
        policy,
        domain_whitelist=list(dict.fromkeys([*_dns_rules(group["whitelist"]), *_dns_rules(policy.domain_whitelist)])),
        groups=[],
    )


def views(policy: Policy) -> list[View]:
    """The groups that need a DNS view: those with a rule dnsmasq can hold, when clients use our resolver
    (`dns_listen`); in the groups' order. A group with time windows and a whitelist has a second view for
    the time outside them, listed after its first (the steering's order)."""
    if not policy.dns_listen:
        return []
    out = []
    for group in policy.groups:
        if not (_dns_rules(group["blacklist"]) or _dns_rules(group["whitelist"])):
            continue
        networks = tuple(group["networks"])
        windows = tuple((tuple(w["days"]), w["start"], w["end"]) for w in group["windows"])
        out.append(View(group["name"], networks, windows, group_policy(policy, group)))
        if windows and _dns_rules(group["whitelist"]):
            out.append(View(group["name"], networks, (), outside_policy(policy, group), outside=True))
    return out


def table_name(root: str) -> str:
    """The nft table of the web filter whose state folder is `root` (stable across restarts)."""
    return "rayfleet_wf_" + hashlib.sha256(root.encode()).hexdigest()[:10]


def _family(address: str) -> str:
    return "ip" if ipaddress.ip_address(address).version == 4 else "ip6"


def _target(address: str, port: int) -> str:
    return f"{address}:{port}" if _family(address) == "ip" else f"[{address}]:{port}"


LOOPBACK = {"ip": "127.0.0.0/8", "ip6": "::1"}


def _local(family: str) -> str:
    return f"meta nfproto {'ipv4' if family == 'ip' else 'ipv6'} fib daddr type local"


def _destinations(family: str, listen: list[str], hook: str, own: str) -> list[tuple[str, str]]:
    """The destination matches of one family's queries to our resolver, each with the address a DNAT
    keeps: one per `dns_listen` address, or, with a wildcard (our dnsmasqs then answer every address of
    the node, both families), any address local to this node, redirected ("": never loopback from a
    network, martian; never Squid's own resolver, `own`)."""
    if not wildcard(listen):
        return [(f"{family} daddr {address}", address) for address in listen if _family(address) == family]
    local = _local(family)
    if hook == "prerouting":
        return [(f"{local} {family} daddr != {LOOPBACK[family]}", "")]
    if own and _family(own) == family:
        return [(f"{local} {family} daddr != {own}", "")]
    return [(local, "")]


def steer_rules(view: View, port: int, listen: list[str], hook: str = "prerouting", own: str = "") -> list[str]:
    """The steering rules of one view at `hook` (prerouting: queries from networks; output: this host's own
    processes): per destination, address family of its networks and window, a DNAT to the same address at
    the view's port, or for a wildcard a redirect to the view's port."""
    rules = []
    times = [
        f' meta day {{ {", ".join(NFT_DAYS[d] for d in days)} }} meta hour "{start}"-"{end}"'
        for days, start, end in view.windows
    ] or [""]
    for family in ("ip", "ip6"):
        nets = [n for n in view.networks if _family(n.split("/")[0]) == family]
        if not nets:
            continue
        for destination, address in _destinations(family, listen, hook, own):
            action = f"dnat {family} to {_target(address, port)}" if address else f"redirect to :{port}"
            match = f"{destination} {family} saddr {{ {', '.join(nets)} }} meta l4proto {{ tcp, udp }}"
            rules += [f"{match} th dport 53{when} {action}" for when in times]
    return rules


def nft_script(table: str, listen: list[str], steering: list[tuple[View, int]], own: str = "") -> str:
    """The whole table (replacing any previous one in the same transaction). `own`: Squid's resolver
    address, never steered."""
    lines = [f"table inet {table} {{}}", f"delete table inet {table}", f"table inet {table} {{"]
    guard = []
    for family in ("ip", "ip6"):
        addresses = [a for a in listen if _family(a) == family]
        if wildcard(listen):
            destination = _local(family)
        elif addresses:
            destination = f"{family} daddr {{ {', '.join(addresses)} }}"
        else:
            continue
        guard.append(f"{destination} meta l4proto {{ tcp, udp }} th dport 53 fib saddr . iif oif missing drop")
    ports = ", ".join(str(port) for _, port in steering)
    chains = {
        "guard": ("type filter hook prerouting priority -150; policy accept;", guard),
        "steer": (
            "type nat hook prerouting priority dstnat; policy accept;",
            [rule for view, port in steering for rule in steer_rules(view, port, listen, "prerouting", own)],
        ),
        "steer_local": (
            "type nat hook output priority -100; policy accept;",
            [rule for view, port in steering for rule in steer_rules(view, port, listen, "output", own)],
        ),
        "direct": (
            "type filter hook input priority 0; policy accept;",
            [f'iifname != "lo" meta l4proto {{ tcp, udp }} th dport {{ {ports} }} ct status ! dnat drop']
            if steering
            else [],
        ),
    }
    for chain, (head, rules) in chains.items():
        lines += [f"  chain {chain} {{", f"    {head}", *(f"    {rule}" for rule in rules), "  }"]
    return "\n".join([*lines, "}"]) + "\n"


class NftTable:
    """The web filter's own nft table: `apply` replaces it whole, `delete` removes it (never another)."""

    def __init__(self, name: str, nft_bin: str = "nft") -> None:
        self.name = name
        self.nft_bin = nft_bin
        self.present = False

    def available(self) -> str | None:
        """Why nft cannot be used here, or None."""
        if shutil.which(self.nft_bin) is None:
            return f"nft ({self.nft_bin}) is not installed: install nftables (scripts/system-deps.sh)"
        return None

    def _run(self, script: str) -> None:
        done = subprocess.run([self.nft_bin, "-f", "-"], input=script.encode(), capture_output=True, timeout=30)
        if done.returncode != 0:
            words = done.stderr.decode(errors="replace").strip().splitlines()
            raise GroupDnsError("nft refused the group DNS table: " + "; ".join(words[:3]))

    def apply(self, listen: list[str], steering: list[tuple[View, int]], own: str = "") -> None:
        why = self.available()
        if why:
            raise GroupDnsError(f"per-group DNS needs nftables: {why}")
        self._run(nft_script(self.name, listen, steering, own))
        self.present = True

    def delete(self) -> None:
        """Remove the table if it exists (also one a killed predecessor left)."""
        if self.available() is None:
            self._run(f"table inet {self.name} {{}}\ndelete table inet {self.name}\n")
        self.present = False
