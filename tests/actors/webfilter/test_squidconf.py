"""Rendering of Squid's rules from the policy (tier 1; the real Squid is exercised in tests/deployments)."""

from __future__ import annotations

import random
from pathlib import Path

from actors.webfilter.dataplane import DataPlane, ProxySettings
from actors.webfilter.logparse import parse_line
from actors.webfilter.squidconf import (
    Policy,
    TlsFiles,
    access_rules,
    acl_files,
    dnsmasq_conf,
    domain_names,
    dstdomain_entries,
    error_page,
    hosts_file,
    squid_conf,
)
from actors.webfilter.tlsfiles import configure_can_bump


def test_dstdomain_entries_cover_subdomains_and_drop_overlaps():
    assert dstdomain_entries(["b.a.test", "a.test", "c.test", "A.test"]) == [".a.test", ".c.test"]


def test_rule_order_puts_egress_and_waf_before_whitelists_and_blacklists():
    policy = Policy(
        domain_blacklist=["x.test"],
        ip_blacklist=["1.2.3.4"],
        domain_whitelist=["ok.test"],
        egress_default_deny=True,
        waf_categories=["XSS"],
    )
    lines = [line for line in access_rules(policy, Path("/acl")) if line.startswith("http_access")]
    order = [
        next(i for i, line in enumerate(lines) if word in line)
        for word in (
            "!allowed_clients",
            "waf_xss",
            "mark_egress_default_deny",
            "allow domain_whitelist",
            "deny domain_blacklist",
            "deny ip_blacklist",
            "allow all",
        )
    ]
    assert order == sorted(order)


def test_egress_default_deny_with_an_empty_allowlist_denies_everything():
    lines = access_rules(Policy(egress_default_deny=True), Path("/acl"))
    assert "http_access deny mark_egress_default_deny" in lines


def test_disabled_lists_render_no_deny():
    lines = access_rules(Policy(domain_blacklist=["x.test"], enable_domain_blacklist=False), Path("/acl"))
    assert not any("deny domain_blacklist" in line for line in lines)


def test_hosts_file_sinkholes_blacklisted_domains():
    assert hosts_file({"a.test": "127.0.0.1"}, ["bad.test"]) == "127.0.0.1 a.test\n0.0.0.0 bad.test\n"


def test_log_lines_parse_with_the_deciding_rule():
    line = "1700000000.123 127.0.0.1 GET 403 TCP_DENIED 10 600 0 waf:XSS http://a.test:8/x?q=%3C Mozilla/5.0 (X11)"
    record = parse_line(line)
    assert record is not None and record.blocked and record.rule == "waf:XSS" and record.host == "a.test"
    assert record.agent == "Mozilla/5.0 (X11)"
    connect = parse_line("1700000000.1 127.0.0.1 CONNECT 200 TCP_TUNNEL 1 2 3 - example.test:443 -")
    assert connect is not None and connect.host == "example.test" and not connect.blocked
    assert parse_line("1700000000.1 127.0.0.1 - 0 NONE_NONE 0 0 0 - error:transaction-end-before-headers -") is None
    assert parse_line("garbage") is None


TLS = TlsFiles(Path("/s/tls/ca.pem"), Path("/s/tls/ca.key"), "/usr/lib/squid/security_file_certgen", Path("/s/ssl_db"))


def _conf(policy: Policy, tls: TlsFiles | None = TLS) -> list[str]:
    text = squid_conf(policy, root=Path("/s"), port=3129, dns="127.53.0.1", cache_mem_mb=8, user="proxy", tls=tls)
    return text.splitlines()


def test_ssl_bump_turns_the_listener_into_a_bumping_port_with_a_certificate_generator():
    lines = _conf(Policy(ssl_bump=True))
    assert lines[0].startswith("http_port 127.0.0.1:3129 ssl-bump tls-cert=/s/tls/ca.pem tls-key=/s/tls/ca.key")
    assert "generate-host-certificates=on" in lines[0]
    assert "sslcrtd_program /usr/lib/squid/security_file_certgen -s /s/ssl_db -M 16MB" in lines
    peek, bump = lines.index("ssl_bump peek tls_step1"), lines.index("ssl_bump bump all")
    assert "acl tls_step1 at_step SslBump1" in lines and peek < bump
    assert not any("splice" in line or "DONT_VERIFY" in line or "sslproxy_cert_error" in line for line in lines)


def test_without_ssl_bump_https_is_a_tunnel_and_origins_are_still_verified_with_the_extra_ca():
    tls = TlsFiles(TLS.ca_cert, TLS.ca_key, TLS.certgen, TLS.cert_db, outgoing_cafile="/s/origin-ca.pem")
    lines = _conf(Policy(ssl_bump=False), tls)
    assert lines[0] == "http_port 127.0.0.1:3129"
    assert not any(line.startswith(("ssl_bump", "sslcrtd")) for line in lines)
    assert "tls_outgoing_options cafile=/s/origin-ca.pem" in lines
    assert "tls_outgoing_options cafile=/s/origin-ca.pem" in _conf(Policy(ssl_bump=True), tls)


def test_only_the_openssl_build_can_bump():
    gnutls = "configure options:  '--with-gnutls' '--enable-linux-netfilter' '--with-default-user=proxy'"
    openssl = "configure options:  '--with-openssl' '--enable-ssl-crtd' '--with-default-user=proxy'"
    assert not configure_can_bump(gnutls) and configure_can_bump(openssl)


def test_dstdomain_entries_keep_exactly_the_names_without_a_listed_parent():
    rng = random.Random(5)
    labels = ["a", "b", "a-b", "ab", "b-", "x1", "0"]
    names = {".".join(rng.choice(labels) for _ in range(rng.randint(1, 4))) + ".test" for _ in range(3000)}
    expected = {n for n in names if not any(n.endswith("." + p) for p in names if p != n)}
    entries = dstdomain_entries(sorted(names, key=lambda _: rng.random()))
    assert len(entries) == len(set(entries)) and {e[1:] for e in entries} == expected


def test_a_list_edit_rewrites_only_that_acl_file(tmp_path):
    plane = DataPlane(tmp_path, ProxySettings())
    root = plane.root  # a private folder when Squid's user cannot reach tmp_path
    try:
        for sub in ("acl", "dns", "errors"):
            (root / sub).mkdir()
        policy = Policy(domain_blacklist=["x.test"], ip_blacklist=["192.0.2.1"], waf_categories=["XSS"])
        assert plane._write(policy)
        ip_file = root / "acl" / "ip_blacklist.txt"
        ip_file.write_text("edited by hand\n")  # the renderer trusts what it wrote: an unchanged list is not re-read
        stamps = {p.name: p.stat().st_mtime_ns for p in (root / "acl").iterdir()}
        policy.domain_blacklist.append("y.test")
        assert plane._write(policy)
        assert (root / "acl" / "domain_blacklist.txt").read_text() == ".x.test\n.y.test\n"
        assert "address=/x.test/y.test/#" in (root / "dns" / "blocklist.conf").read_text()
        after = {p.name: p.stat().st_mtime_ns for p in (root / "acl").iterdir()}
        assert [n for n in stamps if stamps[n] != after[n]] == ["domain_blacklist.txt"]
        assert ip_file.read_text() == "edited by hand\n"
        assert not plane._write(policy)  # nothing changed: nothing to reconfigure
    finally:
        plane.stop()


def test_the_dns_blocklist_covers_subdomains_and_whitelists_win():
    from actors.webfilter.squidconf import dns_blocklist

    policy = Policy(
        domain_blacklist=["ads.test", "cdn.ads.test", "track.test", "kept.test"],
        domain_whitelist=["ok.ads.test", "kept.test"],
    )
    # the blocked domains, several a line (a listed subdomain of a listed parent is covered by it); the
    # exactly whitelisted name is not blocked, the whitelisted subdomain goes to the upstreams
    assert dns_blocklist(policy) == "address=/track.test/ads.test/#\nserver=/ok.ads.test/#\n"
    nx = Policy(domain_blacklist=["ads.test"], dns_block_mode="nxdomain")
    assert dns_blocklist(nx) == "address=/ads.test/\n"
    assert dns_blocklist(Policy(domain_blacklist=["ads.test"], enable_domain_blacklist=False)) == ""


def test_the_dns_blocklist_packs_names_into_lines_dnsmasq_can_read():
    from actors.webfilter.squidconf import LINE_BUDGET, NAMES_A_LINE, dns_blocklist

    short = [f"n{i}.test" for i in range(NAMES_A_LINE + 1)]
    long = [f"{'a' * 60}.{'b' * 60}.{'c' * 60}.{'d' * 60}{i}.test" for i in range(4)]  # 4 x 256 chars: over the budget
    lines = dns_blocklist(Policy(domain_blacklist=short + long)).splitlines()
    assert all(len(line) <= LINE_BUDGET for line in lines)
    named = [name for line in lines for name in line.removeprefix("address=/").removesuffix("/#").split("/")]
    assert sorted(named) == sorted(short + long)
    assert len(dns_blocklist(Policy(domain_blacklist=short)).splitlines()) == 2  # NAMES_A_LINE names a line


def test_wildcard_and_regex_rules_go_to_a_dstdom_regex_acl_of_their_own():
    from actors.webfilter.squidconf import acl_files

    policy = Policy(
        domain_blacklist=["ads.test", "*.wild.test", "/^track[0-9]+\\./"],
        domain_whitelist=["ok.test", "*.fine.wild.test", "/^good-/"],
    )
    files = acl_files(policy)
    assert files["domain_blacklist.txt"] == ".ads.test\n"
    assert files["domain_blacklist_patterns.txt"] == "\\.wild\\.test$\n^track[0-9]+\\.\n"
    assert files["domain_whitelist.txt"] == ".ok.test\n"
    assert files["domain_whitelist_patterns.txt"] == "\\.fine\\.wild\\.test$\n^good-\n"
    lines = access_rules(policy, Path("/acl"))
    assert 'acl domain_blacklist_patterns dstdom_regex -n -i "/acl/domain_blacklist_patterns.txt"' in lines
    assert "acl domain_blocked any-of domain_blacklist domain_blacklist_patterns" in lines
    order = [
        lines.index(line)
        for line in (
            "http_access allow domain_whitelist",
            "http_access allow domain_whitelist_patterns",
            "http_access deny domain_blocked mark_domain_blacklist",
        )
    ]
    assert order == sorted(order)


def test_patterns_alone_need_no_dstdomain_acl():
    lines = access_rules(Policy(domain_blacklist=["*.wild.test"]), Path("/acl"))
    assert "http_access deny domain_blacklist_patterns mark_domain_blacklist" in lines
    assert not any(" dstdomain " in line and "domain_blacklist" in line for line in lines)


def test_dnsmasq_blocks_wildcards_natively_and_leaves_regex_rules_to_the_proxy():
    from actors.webfilter.squidconf import dns_blocklist

    policy = Policy(
        domain_blacklist=["ads.test", "*.wild.test", "*.sub.ads.test", "/^track[0-9]+\\./"],
        domain_whitelist=["ok.wild.test", "*.fine.ads.test", "*.elsewhere.test", "/^good-/"],
    )
    # `*.name` is dnsmasq's own "subdomains only"; a wildcard under a blocked name is covered by it; regex
    # rules have no dnsmasq form (this build has no regex support): the proxy alone enforces them
    assert dns_blocklist(policy) == (
        "address=/ads.test/#\naddress=/*.wild.test/#\nserver=/ok.wild.test/#\nserver=/*.fine.ads.test/#\n"
    )


def test_a_client_group_is_rendered_before_the_global_lists_with_its_whitelist_first_and_its_time_windows():
    group = {
        "name": "kids",
        "networks": ["198.18.5.0/24"],
        "blacklist": ["games.test", "*.video.test"],
        "whitelist": ["school.games.test"],
        "windows": [{"days": ["mon", "tue", "wed", "thu", "fri"], "start": "08:00", "end": "16:30"}],
    }
    policy = Policy(domain_blacklist=["ads.test"], domain_whitelist=["ok.test"], groups=[group])
    lines = access_rules(policy, Path("/acl"))
    order = [
        "http_access allow group_kids_src group_kids_white",
        "acl group_kids_time time MTWHF 08:00-16:30",
        "http_access deny group_kids_src group_kids_black_any group_kids_time mark_group_kids",
        "http_access allow domain_whitelist",
        "http_access deny domain_blacklist mark_domain_blacklist",
    ]
    assert [lines.index(line) for line in order] == sorted(lines.index(line) for line in order)
    assert "acl mark_group_kids annotate_transaction rule=group:kids" in lines
    files = acl_files(policy)
    assert files["group_kids_src.txt"] == "198.18.5.0/24\n"
    assert files["group_kids_black.txt"] == ".games.test\n"
    assert files["group_kids_black_patterns.txt"] != ""
    assert "client group kids" in error_page("group:kids")
    # without windows the group's block applies at all times
    always = access_rules(Policy(groups=[{**group, "windows": []}]), Path("/acl"))
    assert "http_access deny group_kids_src group_kids_black_any mark_group_kids" in always


def test_splice_rules_come_after_the_peek_and_before_the_bump(tmp_path):
    from actors.webfilter.squidconf import TlsFiles, squid_conf

    tls = TlsFiles(tmp_path / "ca.pem", tmp_path / "ca.key", "/usr/lib/squid/security_file_certgen", tmp_path / "db")
    policy = Policy(ssl_bump=True, tls_splice=["bank.test", "*.health.test"])
    lines = squid_conf(
        policy, root=tmp_path, port=3128, dns="127.53.0.1", cache_mem_mb=8, user=None, tls=tls
    ).splitlines()
    bump = [line for line in lines if line.startswith("ssl_bump")]
    assert bump == [
        "ssl_bump peek tls_step1",
        "ssl_bump splice splice_sni",
        "ssl_bump splice splice_sni_patterns",
        "ssl_bump bump all",
    ]
    assert f'acl splice_sni ssl::server_name "{tmp_path / "acl" / "tls_splice.txt"}"' in lines
    files = acl_files(policy)
    assert files["tls_splice.txt"] == ".bank.test\n"
    assert files["tls_splice_patterns.txt"] == "\\.health\\.test$\n"
    # no splice entries: no splice rule (every CONNECT bumped), and nothing when bumping is off
    plain = squid_conf(
        Policy(ssl_bump=True), root=tmp_path, port=3128, dns="127.53.0.1", cache_mem_mb=8, user=None, tls=tls
    )
    assert "ssl_bump splice" not in plain and "ssl_bump bump all" in plain
    off = squid_conf(
        Policy(tls_splice=["bank.test"]), root=tmp_path, port=3128, dns="127.53.0.1", cache_mem_mb=8, user=None, tls=tls
    )
    assert "ssl_bump" not in off


def test_domain_names_are_kept_per_content_and_handed_out_as_copies() -> None:
    """The lines of a list are computed once per content: a caller changing its copy, or the list changing,
    never shows up in the next answer."""
    rules = ["b.test", "a.b.test", "*.w.test", "C.test"]
    first = domain_names(rules)
    assert first == [".b.test", ".c.test"]
    first.append(".spoiled.test")
    assert domain_names(list(rules)) == [".b.test", ".c.test"]
    rules.append("d.test")
    assert domain_names(rules) == [".b.test", ".c.test", ".d.test"]


def test_dnsmasq_listens_on_its_addresses_or_with_a_wildcard_on_every_address_of_the_node():
    def listening(dns_listen: list[str]) -> list[str]:
        conf = dnsmasq_conf(
            Policy(dns_listen=dns_listen), own="127.53.1.2", hosts=Path("/x/hosts"), pid_file=Path("/x/p"), as_root=True
        )
        return [line for line in conf.splitlines() if line.startswith(("listen-address", "interface", "bind-"))]

    assert listening(["198.18.5.1"]) == ["listen-address=127.53.1.2", "listen-address=198.18.5.1", "bind-interfaces"]
    # dnsmasq's wildcard mode: every interface and address (Squid's own among them), each answer sent from the
    # address asked; a socket bound to 0.0.0.0 (bind-interfaces) would answer from the route's address
    assert listening(["0.0.0.0", "198.18.5.1"]) == ["interface=*"]
    assert listening(["::"]) == ["interface=*"]
