import pytest

from deployments.asn.parsing import ASN_MAX, parse_asn, parse_asname, parse_ip


@pytest.mark.parametrize(
    "text, value",
    [
        ("15169", 15169),
        ("AS15169", 15169),
        ("as15169", 15169),
        ("As13335", 13335),
        ("4294967295", ASN_MAX),
        ("AS1.10", 65546),
        ("0.1", 1),
        ("1", 1),
    ],
)
def test_accepted_asn_forms(text, value):
    assert parse_asn(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "-1",
        "99999999999",
        "abc",
        "0",
        "AS0",
        "4294967296",
        "",
        "AS",
        "AS 15169",
        " 15169",
        "15169 ",
        "+15169",
        "AS15169x",
        "1.65536",
        "65536.1",
        "１２３",
        "15_169",
        "0x10",
    ],
)
def test_rejected_asn_forms(text):
    with pytest.raises(ValueError):
        parse_asn(text)


def test_parse_ip_families_and_mapped_v4():
    assert parse_ip("8.8.8.8") == (4, 0x08080808, "8.8.8.8")
    assert parse_ip("::ffff:8.8.8.8") == (4, 0x08080808, "8.8.8.8")
    family, value, text = parse_ip("2001:4860:4860:0::8888")
    assert (family, text) == (6, "2001:4860:4860::8888")
    assert value == 0x20014860486000000000000000008888


@pytest.mark.parametrize("text", ["8.8.8", "256.1.1.1", "8.8.8.8/24", "fe80::1%eth0", "abc", "1:2:3", ""])
def test_parse_ip_rejects(text):
    with pytest.raises(ValueError):
        parse_ip(text)


@pytest.mark.parametrize(
    "raw, name, org, country",
    [
        ("GOOGLE - Google Inc., US", "GOOGLE", "Google Inc.", "US"),
        ("CLOUDFLARENET - CloudFlare, Inc., US", "CLOUDFLARENET", "CloudFlare, Inc.", "US"),
        (
            "RIPE-NCC-AS Reseaux IP Europeens Network Coordination Centre (RIPE NCC), NL",
            "RIPE-NCC-AS",
            "Reseaux IP Europeens Network Coordination Centre (RIPE NCC)",
            "NL",
        ),
        ("-Private Use AS-, ZZ", "Private Use AS", None, None),
        ("-Reserved AS-, ZZ", "Reserved AS", None, None),
        ("A.P. Moller - Maersk A/S, DK", "A.P. Moller - Maersk A/S", "A.P. Moller - Maersk A/S", "DK"),
        ("SLLNET Stockholms Lans Landsting, na", "SLLNET", "Stockholms Lans Landsting, na", None),
        ("EYEMG - EYEMG - interactive media group, US", "EYEMG", "EYEMG - interactive media group", "US"),
        ("LONELY", "LONELY", None, None),
    ],
)
def test_parse_asname(raw, name, org, country):
    parsed = parse_asname(raw)
    assert (parsed.name, parsed.organisation, parsed.country) == (name, org, country)
