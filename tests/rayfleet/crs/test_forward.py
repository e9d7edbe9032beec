"""The tier's forward-proxy mode (a proxy in front sends absolute-URI requests) and extra rules."""

from __future__ import annotations

from pathlib import Path

from rayfleet.crs.config import CrsPaths, CrsPolicy, Forward, Upstream, render_modsecurity, render_nginx


def test_forward_mode_proxies_to_the_request_lines_host_through_the_given_resolver_only():
    paths = CrsPaths(Path("/srv/tier"))
    conf = render_nginx(CrsPolicy(), paths, Upstream(origin="", port=4000, forward=Forward(resolver="127.53.0.9")))
    assert "resolver 127.53.0.9 valid=5s ipv6=off;" in conf and "proxy_pass http://$rf_target;" in conf
    assert "upstream origin" not in conf and "listen 127.0.0.1:4000" in conf
    assert "return 400;" in conf  # a request line without an http:// authority has no target
    assert "modsecurity_rules_file /srv/tier/modsecurity.conf;" in conf
    origin = render_nginx(CrsPolicy(), paths, Upstream(origin="127.0.0.1:8080", port=4000))
    assert "server 127.0.0.1:8080;" in origin and "resolver" not in origin


def test_extra_rules_come_after_crs_and_its_exclusions():
    paths = CrsPaths(Path("/srv/tier"))
    text = render_modsecurity(CrsPolicy(exclusions=(942100,), extra_rules="SecRuleRemoveById 949110\n"), paths)
    assert text.index("SecRuleRemoveById 942100") < text.index("SecRuleRemoveById 949110")
    assert text.rindex("Include ") < text.index("SecRuleRemoveById 949110")
