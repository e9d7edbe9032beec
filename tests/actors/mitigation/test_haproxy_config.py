"""The rendered HAProxy configuration: what each mode and setting puts in, checked by HAProxy itself."""

from __future__ import annotations

import pytest

from actors.mitigation.haproxy_config import LOG_FIELDS, NodePaths, log_format, render
from actors.mitigation.haproxy_process import HAProxyError, check_config
from actors.mitigation.settings import NodeSettings


def _render(tmp_path, **settings) -> str:
    paths = NodePaths(tmp_path)
    for path in paths.all_maps():
        path.write_text("")
    text = render(NodeSettings(origin="127.0.0.1:9", **settings), paths, 18080, 19514)
    paths.config.write_text(text)
    return text


@pytest.mark.parametrize("mode", ["l7", "syn"])
def test_haproxy_accepts_what_each_mode_renders(tmp_path, mode):
    _render(tmp_path, mode=mode, rate_limit_rps=10)
    check_config(NodePaths(tmp_path).config)  # raises HAProxyError with HAProxy's message otherwise


def test_haproxy_errors_carry_haproxys_own_message(tmp_path):
    path = tmp_path / "bad.cfg"
    path.write_text("frontend x\n  bind 127.0.0.1:1\n  no-such-keyword here\n")
    with pytest.raises(HAProxyError, match="no-such-keyword"):
        check_config(path)


def test_l7_renders_the_waf_the_flood_mark_and_the_sockets(tmp_path):
    text = _render(tmp_path, flood_rps=77, anomaly_threshold=9)
    paths = NodePaths(tmp_path)
    assert "  mode http" in text
    assert f"stats socket {paths.admin_socket}" in text
    assert "log 127.0.0.1:19514" in text
    assert "bind 127.0.0.1:18080" in text
    assert "sc_http_req_rate(0) gt 77" in text
    assert "var(txn.score) -m int ge 9" in text
    assert f"map_reg({paths.waf('critical')})" in text
    assert "rate_limited" not in text  # no rate_limit policy: no 429 rule


def test_a_rate_limit_policy_adds_its_429_rule(tmp_path):
    assert "sc_http_req_rate(0) gt 25 }" in _render(tmp_path, rate_limit_rps=25)


def test_syn_mode_is_tcp_with_a_connection_rate_limit_and_no_waf(tmp_path):
    text = _render(tmp_path, mode="syn", syn_conn_rate=13)
    assert "  mode tcp" in text
    assert "sc_conn_rate(0) gt 13" in text
    assert "map_reg" not in text and "\n  http-request " not in text


def test_the_log_format_has_one_field_per_parsed_column():
    assert len(log_format().split("|")) == len(LOG_FIELDS)


@pytest.mark.parametrize(
    "settings",
    [
        {"mode": "l7", "accept_proxy": True, "trusted_proxies": ["10.0.0.0/8", "fd00::/8"], "also_listen": ["::1"]},
        {"mode": "syn", "accept_proxy": True, "also_listen": ["::1"]},
    ],
    ids=["l7", "syn"],
)
def test_haproxy_accepts_the_client_address_and_ipv6_settings(tmp_path, settings):
    text = _render(tmp_path, **settings)
    check_config(NodePaths(tmp_path).config)
    assert "bind 127.0.0.1:18080 backlog 4096 accept-proxy" in text
    assert "bind [::1]:18080 backlog 4096 accept-proxy" in text
    assert "stick-table type ipv6 " in text
    assert "tcp-request connection" not in text  # with PROXY headers the checks see the client: session rules


def test_trusted_proxies_are_not_tracked_and_pass_on_their_last_forwarded_hop(tmp_path):
    text = _render(tmp_path, trusted_proxies=["10.0.0.0/8"])
    assert "tcp-request connection track-sc0 src if !{ src 10.0.0.0/8 }" in text
    assert "http-request set-src hdr_ip(X-Forwarded-For,-1) if { src 10.0.0.0/8 }" in text
    set_src, track = text.index("http-request set-src"), text.index("http-request track-sc0 src")
    assert set_src < track < text.index("sc-set-gpt0")  # the client is tracked before its rate is read
    assert "set-src" not in _render(tmp_path)  # nobody is trusted by default
