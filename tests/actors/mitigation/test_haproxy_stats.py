"""Parsing what HAProxy's runtime API and log stream say."""

from __future__ import annotations

from actors.mitigation.haproxy_config import LOG_FIELDS, WAF_MAPS
from actors.mitigation.haproxy_stats import parse_info, parse_log_line, parse_stat, parse_table


def test_show_info_becomes_a_mapping():
    info = parse_info("Name: HAProxy\nVersion: 2.6.12\nCumConns: 42\n\nnot a field\n")
    assert info == {"Name": "HAProxy", "Version": "2.6.12", "CumConns": "42"}


def test_show_stat_csv_is_keyed_by_proxy_and_server():
    text = "# pxname,svname,scur,req_tot,\nmitigation,FRONTEND,3,120,\norigin,origin,0,,\norigin,BACKEND,1,118,\n\n"
    stats = parse_stat(text)
    assert set(stats) == {("mitigation", "FRONTEND"), ("origin", "origin"), ("origin", "BACKEND")}
    assert stats[("mitigation", "FRONTEND")]["req_tot"] == "120"
    assert parse_stat("# \n") == {}


def test_show_table_entries_carry_integer_fields_whatever_their_period():
    text = (
        "# table: mitigation, type: ip, size:204800, used:2\n"
        "0x55d1: key=10.0.0.1 use=0 exp=59000 shard=0 gpt0=1 gpc0=0 gpc1=17 http_req_rate(1000)=55 conn_cur=2\n"
        "0x55d2: key=10.0.0.2 use=0 exp=1000 gpc1=3 server_id=abc\n"
    )
    first, second = parse_table(text)
    assert first.key == "10.0.0.1"
    assert first.get("gpc1") == 17
    assert first.get("http_req_rate") == 55  # the period in the name does not matter
    assert first.get("gpt0") == 1
    assert first.get("conn_rate") == 0  # absent
    assert second.key == "10.0.0.2"
    assert "server_id" not in second.fields  # not an integer: skipped


def _datagram(fields: dict[str, str]) -> bytes:
    message = "|".join(fields.get(name, "-") for name in LOG_FIELDS)
    return f"<134>Nov 26 06:00:00 haproxy[123]: {message}\n".encode()


def test_a_log_line_names_the_source_outcome_and_matched_rules():
    record = parse_log_line(
        _datagram(
            {"src": "10.1.2.3", "status": "403", "reason": "waf", "block": "rule-1", "critical": "crs-sqli-union"}
            | {"score": "5", "time_ms": "12", "term": "PR--"}
        )
    )
    assert record is not None
    assert (record.src, record.status, record.reason, record.score, record.time_ms) == ("10.1.2.3", 403, "waf", 5, 12)
    assert record.rules == {"block": "rule-1", "critical": "crs-sqli-union"}
    assert record.term == "PR--"


def test_dashes_mean_nothing_matched_and_bad_numbers_read_as_zero():
    record = parse_log_line(_datagram({"src": "::1", "status": "200", "score": "-", "time_ms": "x", "term": "----"}))
    assert record is not None
    assert record.reason is None and record.rules == {}
    assert record.score == 0 and record.time_ms == 0


def test_lines_that_are_not_ours_are_ignored():
    assert parse_log_line(b"<134>Nov 26 06:00:00 haproxy[1]: Proxy mitigation started.") is None
    assert parse_log_line(b"no syslog header at all") is None
    assert len(WAF_MAPS) + 6 == len(LOG_FIELDS)
