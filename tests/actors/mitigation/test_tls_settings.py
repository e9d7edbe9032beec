"""TLS settings are checked before anything runs: files readable, key and certificate a pair, a known
minimum version, h2 only where HTTP is spoken, nothing that could inject into haproxy.cfg; the key
never appears in an error. The rendered configuration names the combined PEM, never the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from pydantic import ValidationError

from actors.mitigation.haproxy_config import NodePaths, render
from actors.mitigation.settings import NodeSettings
from actors.mitigation.tls import CertificateError, check_pair, demo_pair, write_private
from tests.actors.mitigation.certs import CertificateAuthority, Issued


@pytest.fixture
def ca(tmp_path: Path) -> CertificateAuthority:
    return CertificateAuthority(tmp_path / "ca")


@pytest.fixture
def issued(ca: CertificateAuthority) -> Issued:
    return ca.signed(["localhost", "127.0.0.1"])


def tls(issued: Issued, **extra: object) -> dict[str, object]:
    return {"cert_file": str(issued.cert_file), "key_file": str(issued.key_file), **extra}


def refused(**settings: object) -> str:
    with pytest.raises(ValidationError) as caught:
        NodeSettings.model_validate(settings)
    return str(caught.value)


def key_body(pem: str) -> str:
    """A line from the middle of a PEM key: what a leak would show."""
    return pem.strip().splitlines()[1]


# -- what an attacker or a typo could slip in ---------------------------------------------
def test_a_key_that_is_not_the_certificates_is_refused_without_showing_either_key(ca, issued):
    other = ca.signed(["localhost"])
    message = refused(tls={"cert_file": str(issued.cert_file), "key_file": str(other.key_file)})
    assert "does not match the certificate" in message
    assert key_body(other.pair.key_pem) not in message and key_body(issued.pair.key_pem) not in message


def test_missing_files_unknown_versions_and_mixed_sources_are_refused(issued, tmp_path):
    assert "cannot be read" in refused(tls={"cert_file": str(tmp_path / "none.crt"), "key_file": str(issued.key_file)})
    assert "TLSv1.2" in refused(tls=tls(issued, min_version="TLSv1.1"))
    assert "cert_file and key_file are both required" in refused(tls={"cert_file": str(issued.cert_file)})
    assert "either demo" in refused(tls=tls(issued, demo=True))
    assert "alpn" in refused(tls=tls(issued, alpn=["h3"]))
    assert "each protocol once" in refused(tls=tls(issued, alpn=["h2", "h2"]))
    assert "demo" in refused(tls={"demo": "true"})  # strict: a string is not a boolean


def test_a_key_file_that_holds_a_certificate_is_refused(issued):
    message = refused(tls={"cert_file": str(issued.cert_file), "key_file": str(issued.cert_file)})
    assert "not an unencrypted PEM private key" in message


def test_h2_on_a_syn_node_is_refused_and_a_syn_node_offers_no_alpn_by_default(issued):
    assert "h2" in refused(mode="syn", tls=tls(issued, alpn=["h2"]))
    settings = NodeSettings.model_validate({"mode": "syn", "tls": tls(issued)})
    assert settings.tls is not None and settings.tls.protocols("syn") == []


def test_paths_and_names_that_would_inject_into_haproxy_cfg_are_refused(issued, tmp_path):
    odd = tmp_path / "a b.pem"
    odd.write_text(issued.pair.cert_pem)
    assert "letters, digits" in refused(tls={"cert_file": str(odd), "key_file": str(issued.key_file)})
    assert "letters, digits" in refused(origin_tls={"ca_file": f"{issued.cert_file}\n  server evil 1.2.3.4:80"})
    assert "not a host name" in refused(origin_tls={"sni": "origin) ssl verify none #"})


def test_an_origin_ca_file_must_hold_certificates_and_needs_verify(issued, tmp_path):
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    assert "holds no PEM certificate" in refused(origin_tls={"ca_file": str(junk)})
    assert "only read with verify" in refused(origin_tls={"verify": False, "ca_file": str(issued.cert_file)})


def test_an_expired_or_garbled_pair_is_refused(issued):
    with pytest.raises(CertificateError, match="not a PEM X.509 certificate"):
        check_pair("garbage", issued.pair.key_pem)
    with pytest.raises(CertificateError) as caught:
        check_pair(issued.pair.cert_pem, issued.pair.key_pem.replace("A", "B", 3))
    assert key_body(issued.pair.key_pem) not in str(caught.value)


# -- what is rendered and written -------------------------------------------------------
def test_the_bind_names_the_combined_pem_alpn_and_minimum_version(issued, tmp_path):
    settings = NodeSettings.model_validate({"tls": tls(issued, min_version="TLSv1.3")})
    paths = NodePaths(tmp_path)
    text = render(settings, paths, 8443, 5140)
    assert f"bind 127.0.0.1:8443 backlog 4096 ssl crt {paths.certificate} ssl-min-ver TLSv1.3 alpn h2,http/1.1" in text
    assert "PRIVATE KEY" not in text and str(issued.key_file) not in text


def test_an_https_origin_is_verified_against_its_ca_and_sni(issued, tmp_path):
    origin = {"ca_file": str(issued.cert_file), "sni": "origin.test"}
    text = render(NodeSettings.model_validate({"origin_tls": origin}), NodePaths(tmp_path), 80, 5140)
    assert f"ssl verify required ca-file {issued.cert_file} sni str(origin.test)" in text
    text = render(NodeSettings.model_validate({"origin_tls": {}}), NodePaths(tmp_path), 80, 5140)
    assert "ssl verify required ca-file @system-ca" in text
    text = render(NodeSettings.model_validate({"origin_tls": {"verify": False}}), NodePaths(tmp_path), 80, 5140)
    assert "ssl verify none" in text


def test_the_demo_pair_names_localhost_and_both_loopbacks(tmp_path):
    pair = demo_pair()
    assert check_pair(pair.cert_pem, pair.key_pem) == pair
    names = x509.load_pem_x509_certificate(pair.cert_pem.encode()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    shown = {str(v) for v in names.value.get_values_for_type(x509.IPAddress)}
    assert names.value.get_values_for_type(x509.DNSName) == ["localhost"] and shown == {"127.0.0.1", "::1"}
    write_private(tmp_path / "demo.pem", pair.combined)
    assert (tmp_path / "demo.pem").stat().st_mode & 0o777 == 0o600
