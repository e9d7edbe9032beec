"""The DNS-over-TLS forwarder's configuration: every upstream verified (CA bundle and name), TLS only, never a
plain fallback; dnsmasq forwards only to the forwarder when the upstreams are tls://. The rendered
configuration is checked by the real `unbound-checkconf`."""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from pathlib import Path

import pytest

from actors.webfilter import dotforward
from actors.webfilter.squidconf import Policy, dnsmasq_conf


def test_an_entry_is_parsed_to_address_port_and_the_name_to_verify():
    up = dotforward.parse("TLS://198.18.0.2#Dns.Example.")
    assert (up.address, up.port, up.name) == (ipaddress.ip_address("198.18.0.2"), 853, "dns.example")
    assert str(up) == "tls://198.18.0.2:853#dns.example"
    six = dotforward.parse("tls://[2001:2::53]:8853#dns.example")
    assert str(six) == "tls://[2001:2::53]:8853#dns.example" and six.forward_addr == "2001:2::53@8853#dns.example"


@pytest.mark.parametrize(
    "entry",
    [
        "tls://198.18.0.2",  # no name: unbound would not check one
        "tls://198.18.0.2:853#",
        "tls://resolver.example#dns.example",
        "tls://198.18.0.2:0#dns.example",
        "tls://198.18.0.256#dns.example",
        "tls://[198.18.0.2]#dns.example",
        "tls://198.18.0.2#dns..example",
        "tls://198.18.0.2#dns.example\n",
        "tls://198.18.0.2#a b",
    ],
)
def test_a_bad_entry_is_refused(entry):
    with pytest.raises(ValueError):
        dotforward.parse(entry)


def test_dnsmasq_forwards_only_to_the_forwarder_when_the_upstreams_are_tls(tmp_path):
    tls = ["tls://198.18.0.2:853#dns.example"]
    assert dotforward.dnsmasq_servers(tls, "127.0.0.1#5301") == ["127.0.0.1#5301"]
    assert dotforward.dnsmasq_servers(tls, "") == []  # no forwarder yet: nothing in plain
    assert dotforward.dnsmasq_servers(["198.18.0.2", "198.18.0.3#5353"], "127.0.0.1#5301") == [
        "198.18.0.2",
        "198.18.0.3#5353",
    ]
    conf = dnsmasq_conf(
        Policy(dns_upstreams=tls),
        own="127.53.0.9",
        hosts=tmp_path / "hosts",
        pid_file=tmp_path / "pid",
        as_root=False,
        forwarder="127.0.0.1#5301",
    )
    assert [ln for ln in conf.splitlines() if ln.startswith("server=")] == ["server=127.0.0.1#5301"]
    assert "198.18.0.2" not in conf


def test_the_forwarder_verifies_every_upstream_and_never_falls_back(tmp_path):
    ups = [dotforward.parse("tls://198.18.0.2#dns.example"), dotforward.parse("tls://[2001:2::53]#dns.example")]
    conf = dotforward.unbound_conf(ups, "/etc/ssl/certs/ca-certificates.crt", 5301, tmp_path, tmp_path / "u.pid")
    lines = [ln.strip() for ln in conf.splitlines()]
    assert 'tls-cert-bundle: "/etc/ssl/certs/ca-certificates.crt"' in lines
    assert "forward-tls-upstream: yes" in lines and "forward-first: no" in lines
    assert [ln for ln in lines if ln.startswith("forward-addr")] == [
        "forward-addr: 198.18.0.2@853#dns.example",
        "forward-addr: 2001:2::53@853#dns.example",
    ]
    assert "interface: 127.0.0.1" in lines and "port: 5301" in lines and "do-ip6: yes" in lines
    assert dotforward.ca_file("") == dotforward.SYSTEM_CA and dotforward.ca_file("/x.pem") == "/x.pem"


@pytest.mark.skipif(shutil.which("unbound-checkconf") is None, reason="unbound not installed (system-deps.sh)")
def test_unbound_accepts_the_rendered_configuration(tmp_path: Path):
    ups = [dotforward.parse("tls://198.18.0.2:853#dns.example")]
    path = tmp_path / "unbound.conf"
    path.write_text(dotforward.unbound_conf(ups, dotforward.SYSTEM_CA, 5301, tmp_path, tmp_path / "u.pid"))
    done = subprocess.run(["unbound-checkconf", str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr + done.stdout
