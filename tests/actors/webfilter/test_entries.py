"""Entry validation and list parsing (tier 1)."""

from __future__ import annotations

import pytest

from actors.webfilter.entries import EntryError, classify, domain_entry, domain_rule, ip_entry, is_bogon, parse_list


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


# -- domain rules: names, `*.` wildcards (subdomains only) and `/regex/` host patterns ----------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("Ads.Example", "ads.example"),
        (".ads.example", "ads.example"),  # Squid's spelling of "the name and its subdomains"
        ("*.Ads.Example", "*.ads.example"),  # subdomains only
        ("*.bücher.example", "*.xn--bcher-kva.example"),
        ("/^track[0-9]+\\./", "/^track[0-9]+\\./"),
        ("/^Track[0-9]{1,3}-(eu|us)\\.cdn\\./", "/^track[0-9]{1,3}-(eu|us)\\.cdn\\./"),
        ("/(www\\.)?ads\\.example$/", "/(www\\.)?ads\\.example$/"),
    ],
)
def test_domain_rules_are_canonical(text, expected):
    assert domain_rule(text) == expected


@pytest.mark.parametrize(
    "text, why",
    [
        ("*.com", "two labels"),  # a whole top-level domain
        ("ads*.example", "leading"),
        ("*.*.ads.example", "leading"),
        ("a.*.example", "leading"),
        ("/(a+)+x/", "nested"),
        ("/(a*)*x/", "nested"),
        ("/([a-z0-9]+\\.)*ads\\.example/", "nested"),
        ("/((ab)+c)?d/", "nested"),
        ("/(a|ab)+c/", "alternation"),
        ("/\\d+\\.example/", "escape"),
        ("/(?=ads)ads/", "not supported"),
        ("/(a)\\1/", "escape"),
        ("/[a-z/", "invalid"),
        ("/a{1000}/", "repeat"),
        ("/" + "a" * 300 + "/", "longer"),
        ("//", "empty"),
        ("/.*/", "empty"),
        ("/^/", "empty"),
        ("/ads\x00x/", "control"),
        ("/ads x/", "control"),
        ("/ads\nx/", "control"),
        ("/ads#x/", "not allowed"),
        ('/ads"x/', "not allowed"),
        ("/a**/", "invalid"),
    ],
)
def test_bad_domain_rules_are_refused_with_the_reason(text, why):
    with pytest.raises(EntryError, match=why):
        domain_rule(text)


def test_the_regex_subset_means_the_same_in_python_and_posix_ere():
    # what Squid's dstdom_regex (POSIX ERE) sees is what the validator compiled: no class shorthands, no
    # lazy or possessive quantifiers, no lookarounds (ERE reads them differently or not at all)
    for text in ("/a+?b/", "/\\w+/", "/\\s/", "/a{2}+/", "/(?i)ads/"):
        with pytest.raises(EntryError):
            domain_rule(text)


def test_adblock_rules_become_blocks_and_exceptions_and_every_skipped_line_has_a_reason():
    text = "\n".join(
        [
            "[Adblock Plus 2.0]",
            "! Title: test list",
            "||ads.example^",
            "||metrics.example.org^$third-party",
            "@@||good.ads.example^",
            "@@||cdn.example^$document",
            "example.com##.banner",  # cosmetic: hides an element, never blocks the site
            "example.net#@#.ad",
            "||ads.example/banner/*",  # a URL rule, not a domain rule
            "|https://tracker.example/pixel|",
            "||bad.example^$badfilter",  # options that change what the rule means are not honoured silently
            "||only.example^$domain=news.example",
            "/^track[0-9]+\\./",
            "/(a+)+/",
            "*.wild.example",
            "not a domain!",
            "||ads.example^",
        ]
    )
    parsed = parse_list(text, "domain")
    assert parsed.entries == ["ads.example", "metrics.example.org", "/^track[0-9]+\\./", "*.wild.example"]
    assert parsed.exceptions == ["good.ads.example", "cdn.example"]
    assert dict(parsed.reasons) == {
        "adblock_cosmetic": 2,
        "adblock_url_rule": 2,
        "adblock_option": 2,
        "invalid_regex": 1,
        "invalid": 1,
        "duplicate": 1,
    }
    assert parsed.invalid == 2 and parsed.duplicates == 1


def test_an_ip_list_takes_no_exceptions():
    parsed = parse_list("8.8.8.8\n@@||good.example^\n", "ip")
    assert parsed.entries == ["8.8.8.8"] and parsed.exceptions == [] and parsed.reasons["invalid"] == 1
