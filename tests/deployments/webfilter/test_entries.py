"""Entry validation and list parsing (tier 1)."""

from __future__ import annotations

import pytest

from deployments.webfilter.entries import EntryError, classify, domain_entry, ip_entry, is_bogon, parse_list


@pytest.mark.parametrize(
    "text, expected",
    [("1.2.3.4", "1.2.3.4"), ("1.2.3.9/24", "1.2.3.0/24"), ("2001:db8::1", "2001:db8::1"), (" 8.8.8.8/32 ", "8.8.8.8")],
)
def test_ip_entries_are_canonical(text, expected):
    assert ip_entry(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Example.COM.", "example.com"),
        ("*.ads.test", "ads.test"),
        (".x.test", "x.test"),
        ("https://a.b.test/path", "a.b.test"),
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_domain_entries_are_lower_case_idna(text, expected):
    assert domain_entry(text) == expected


@pytest.mark.parametrize("text", ["localhost", "-bad.test", "a..b", "1.2.3.4", "xn--zz.test", "a" * 64 + ".test"])
def test_invalid_domains_are_refused(text):
    with pytest.raises(EntryError):
        domain_entry(text)


def test_bogons_cover_private_loopback_documentation_and_overlaps():
    assert all(is_bogon(x) for x in ("10.1.1.1", "127.0.0.1", "192.0.2.0/24", "0.0.0.0/0", "fe80::1", "::1"))
    assert not any(is_bogon(x) for x in ("8.8.8.8", "1.1.1.0/24", "2a00:1450::1"))


def test_classify_egress_entries():
    assert classify("10.0.0.0/8") == ("cidr", "10.0.0.0/8")
    assert classify("Api.Example.com") == ("domain", "api.example.com")


def test_parse_list_counts_what_it_skips():
    parsed = parse_list(
        "0.0.0.0 a.test\n0.0.0.0 a.test\nnot a domain!\n||b.test^\n# c\n127.0.0.1 localhost\n", "domain"
    )
    assert parsed.entries == ["a.test", "b.test"] and parsed.duplicates == 1 and parsed.invalid == 1
    ips = parse_list("1.2.3.0/24 ; SBL1\n10.0.0.0/8\nfoo\n", "ip")
    assert ips.entries == ["1.2.3.0/24"] and ips.bogon_skipped == 1 and ips.invalid == 1


@pytest.mark.parametrize(
    "text",
    [
        "example.com\n.com",  # `$` matched before the newline: two ACL lines, one a whole TLD
        "example.com\n",
        "a.example\r\nb.example",
        "exa\tmple.com",
        "example.com\x00.evil",
        "exam ple.com",
        "example.com\x0b",
        "ex\x7fample.com",
    ],
)
def test_a_domain_with_a_control_character_or_inner_space_is_refused(text):
    with pytest.raises(EntryError):
        domain_entry(text)


@pytest.mark.parametrize("text", ["1.2.3.4\n5.6.7.8", "10.0.0.0/8\n", "1.2.3.4\x00", "1.2.3.4 /24"])
def test_an_address_with_a_control_character_or_inner_space_is_refused(text):
    with pytest.raises(EntryError):
        ip_entry(text)
    with pytest.raises(EntryError):
        classify(text)


def test_an_imported_line_never_smuggles_a_second_entry():
    parsed = parse_list("good.example\nevil.example\x0b.com\n0.0.0.0 also\x00.example\n", "domain")
    assert parsed.entries == ["good.example"] and parsed.invalid == 2
