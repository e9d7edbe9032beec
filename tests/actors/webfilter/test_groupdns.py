"""The lists a client group's own dnsmasq renders (Squid's order: the group's whitelist, its blacklist, the
global whitelist, the global blacklist) and the nft table that steers the group's clients to it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from actors.webfilter import groupdns
from actors.webfilter.dataplane import DataPlane, DataPlaneError, ProxySettings
from actors.webfilter.grouprules import GroupPolicy
from actors.webfilter.squidconf import Policy, dns_blocklist
from tests.deployments.webfilter.conftest import require_dataplane, state_folder


def group(**kw: object) -> GroupPolicy:
    base: GroupPolicy = {"name": "kids", "networks": ["198.18.5.0/24"], "blacklist": [], "whitelist": [], "windows": []}
    return {**base, **kw}  # type: ignore[typeddict-item]


def test_the_group_blacklist_wins_over_the_global_whitelist_and_the_group_whitelist_over_everything():
    policy = Policy(
        domain_blacklist=["ads.test", "tracker.test"],
        domain_whitelist=["games.test", "x.games.test", "*.clips.test", "ok.ads.test", "/^re/"],
    )
    kids = group(blacklist=["games.test", "*.clips.test", "/^track/"], whitelist=["cdn.tracker.test"])
    view = groupdns.group_policy(policy, kids)
    # the global whitelist entries the group's blacklist covers are gone; the rest stay; no regex rules
    assert view.domain_whitelist == ["cdn.tracker.test", "ok.ads.test"]
    assert view.domain_blacklist == ["games.test", "*.clips.test", "ads.test", "tracker.test"]
    rendered = dns_blocklist(view)
    assert "games.test" in rendered and "address=/*.clips.test/#" in rendered
    assert "server=/cdn.tracker.test/#" in rendered and "server=/ok.ads.test/#" in rendered


def test_a_disabled_global_blacklist_leaves_the_group_blacklist():
    view = groupdns.group_policy(
        Policy(domain_blacklist=["ads.test"], enable_domain_blacklist=False), group(blacklist=["g.test"])
    )
    assert view.domain_blacklist == ["g.test"] and view.enable_domain_blacklist


def test_views_exist_for_groups_with_dns_rules_when_clients_use_our_resolver():
    groups = [group(blacklist=["g.test"]), group(name="regex", networks=["198.18.6.0/24"], blacklist=["/^x/"])]
    assert groupdns.views(Policy(groups=groups)) == []  # no dns_listen: only Squid asks our resolver
    assert [v.group for v in groupdns.views(Policy(groups=groups, dns_listen=["198.18.5.1"]))] == ["kids"]


def test_the_table_steers_by_source_and_window_and_guards_the_views():
    windowed = group(networks=["198.18.5.0/24", "fd00:5::/64"], blacklist=["g.test"])
    windowed["windows"] = [{"days": ["mon", "fri"], "start": "08:00", "end": "18:00"}]
    (view,) = groupdns.views(Policy(groups=[windowed], dns_listen=["198.18.5.1", "fd00:5::1"]))
    script = groupdns.nft_script("rayfleet_wf_x", ["198.18.5.1", "fd00:5::1"], [(view, 40001)])
    assert script.startswith("table inet rayfleet_wf_x {}\ndelete table inet rayfleet_wf_x\n")
    assert (
        "ip daddr 198.18.5.1 ip saddr { 198.18.5.0/24 } meta l4proto { tcp, udp } th dport 53 "
        'meta day { Monday, Friday } meta hour "08:00"-"18:00" dnat ip to 198.18.5.1:40001'
    ) in script
    assert "ip6 daddr fd00:5::1 ip6 saddr { fd00:5::/64 }" in script and "dnat ip6 to [fd00:5::1]:40001" in script
    assert "ip daddr { 198.18.5.1 } meta l4proto { tcp, udp } th dport 53 fib saddr . iif oif missing drop" in script
    assert 'iifname != "lo" meta l4proto { tcp, udp } th dport { 40001 } ct status ! dnat drop' in script
    # every statement names our table only
    assert {
        line.split()[3 if line.startswith("delete") else 2]
        for line in script.splitlines()
        if line.startswith(("table", "delete"))
    } == {"rayfleet_wf_x"}


def test_a_missing_nft_is_named():
    table = groupdns.NftTable("rayfleet_wf_x", "/nonexistent/nft")
    assert "not installed" in (table.available() or "")


def test_startup_with_a_group_dns_view_and_no_nft_fails_with_the_reason_and_starts_nothing():
    require_dataplane()
    root = state_folder()
    plane = DataPlane(root, ProxySettings(nft_bin="/nonexistent/nft"))
    policy = Policy(dns_listen=["127.0.0.153"], groups=[group(blacklist=["g.test"])])
    try:
        with pytest.raises(DataPlaneError, match="per-group DNS needs nftables: nft .* is not installed"):
            plane.start(policy)
        assert plane.supervisor is None and not plane.running()
    finally:
        plane.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_a_wildcard_listen_steers_every_local_address_by_redirect_and_keeps_the_guards():
    kids = group(networks=["198.18.5.0/24", "fd00:5::/64"], blacklist=["g.test"])
    kids["windows"] = [{"days": ["sat"], "start": "09:00", "end": "12:00"}]
    listen = ["0.0.0.0", "198.18.5.1"]  # dnsmasq's wildcard mode answers both families: both are guarded
    (view,) = groupdns.views(Policy(groups=[kids], dns_listen=listen))
    script = groupdns.nft_script("rayfleet_wf_x", listen, [(view, 40001)], own="127.53.1.2")
    chains = _chains(script)
    # the guard: every query to a local address on port 53 must come from where its source routes back to
    assert chains["guard"] == [
        f"meta nfproto {nf} fib daddr type local meta l4proto {{ tcp, udp }} th dport 53 fib saddr . iif oif missing drop"
        for nf in ("ipv4", "ipv6")
    ]
    # from networks: any local address but loopback (martian from a network: steering would deliver it),
    # redirected to the view's port at the address the query came in on; the wildcard covers 198.18.5.1
    # and the IPv6 addresses
    when = 'meta day { Saturday } meta hour "09:00"-"12:00"'
    assert chains["steer"] == [
        "meta nfproto ipv4 fib daddr type local ip daddr != 127.0.0.0/8 ip saddr { 198.18.5.0/24 } "
        f"meta l4proto {{ tcp, udp }} th dport 53 {when} redirect to :40001",
        "meta nfproto ipv6 fib daddr type local ip6 daddr != ::1 ip6 saddr { fd00:5::/64 } "
        f"meta l4proto {{ tcp, udp }} th dport 53 {when} redirect to :40001",
    ]
    # this node's own processes: any local address but Squid's own resolver
    assert chains["steer_local"][0].startswith(
        "meta nfproto ipv4 fib daddr type local ip daddr != 127.53.1.2 ip saddr { 198.18.5.0/24 } "
    )
    assert chains["steer_local"][1].startswith("meta nfproto ipv6 fib daddr type local ip6 saddr { fd00:5::/64 } ")
    # a query reaching the view's port unsteered is dropped, as with listed addresses
    assert chains["direct"] == ['iifname != "lo" meta l4proto { tcp, udp } th dport { 40001 } ct status ! dnat drop']


def _chains(script: str) -> dict[str, list[str]]:
    """The rules of each chain of an nft script (its hook line left out)."""
    chains: dict[str, list[str]] = {}
    current = None
    for line in script.splitlines():
        words = line.split()
        if words[:1] == ["chain"]:
            current = chains.setdefault(words[1], [])
        elif current is not None and line.startswith("    ") and not line.strip().startswith("type "):
            current.append(line.strip())
    return chains


def test_nft_takes_the_wildcard_table():
    """The script of a wildcard listen is one nft accepts (`nft -c`: checked by the kernel, nothing applied)."""
    if shutil.which("nft") is None or os.geteuid() != 0:
        pytest.skip("nft and root needed")
    kids = group(networks=["198.18.5.0/24", "fd00:5::/64"], blacklist=["g.test"])
    kids["windows"] = [{"days": ["mon"], "start": "08:00", "end": "09:00"}]
    listen = ["0.0.0.0", "::"]
    (view,) = groupdns.views(Policy(groups=[kids], dns_listen=listen))
    script = groupdns.nft_script(groupdns.table_name("/nonexistent/check"), listen, [(view, 40001)], own="127.53.1.2")
    done = subprocess.run(["nft", "-c", "-f", "-"], input=script, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_outside_its_windows_a_groups_whitelist_still_wins_over_the_global_blacklist():
    """Squid keeps a group's whitelist at all times (only its blacklist has windows): the group's clients
    get a second view outside the windows, with the global lists and the group's whitelist, steered after
    the in-window one so that inside a window the first DNAT wins."""
    policy_lists = {"domain_blacklist": ["ads.test", "games.test"], "domain_whitelist": ["ok.test"]}
    kids = group(blacklist=["games.test", "late.test"], whitelist=["cdn.ads.test"])
    kids["windows"] = [{"days": ["mon"], "start": "08:00", "end": "18:00"}]
    policy = Policy(groups=[kids], dns_listen=["198.18.5.1"], **policy_lists)  # type: ignore[arg-type]
    inside, outside = groupdns.views(policy)
    assert (inside.key, inside.outside, outside.key, outside.outside) == ("kids", False, "kids.outside", True)
    assert outside.group == "kids" and outside.windows == ()
    assert outside.policy.domain_blacklist == ["ads.test", "games.test"]  # the global list alone
    assert outside.policy.domain_whitelist == ["cdn.ads.test", "ok.test"]
    assert "late.test" in dns_blocklist(inside.policy) and "late.test" not in dns_blocklist(outside.policy)
    steer = _chains(groupdns.nft_script("rayfleet_wf_x", ["198.18.5.1"], [(inside, 40001), (outside, 40002)]))
    assert steer["steer"] == [
        "ip daddr 198.18.5.1 ip saddr { 198.18.5.0/24 } meta l4proto { tcp, udp } th dport 53 "
        'meta day { Monday } meta hour "08:00"-"18:00" dnat ip to 198.18.5.1:40001',
        "ip daddr 198.18.5.1 ip saddr { 198.18.5.0/24 } meta l4proto { tcp, udp } th dport 53 dnat ip to 198.18.5.1:40002",
    ]
    # no whitelist, or no windows: the global view (or the one view) already answers the rest of the time
    kids["whitelist"] = []
    assert [v.key for v in groupdns.views(policy)] == ["kids"]
    kids["whitelist"], kids["windows"] = ["cdn.ads.test"], []
    assert [v.key for v in groupdns.views(policy)] == ["kids"]
