"""ModSecurity's JSON audit log read into blocks: who, what, which rules (rayfleet.crs.audit)."""

from __future__ import annotations

import json
from pathlib import Path

from rayfleet.crs.audit import AuditTail, parse_audit_line


def line(ip: str = "198.51.100.7", status: int = 403, rules: tuple[str, ...] = ("942100", "949110")) -> str:
    messages = [
        {
            "message": "Inbound Anomaly Score Exceeded (Total Score: 10)" if r == "949110" else "SQLi",
            "details": {"ruleId": r},
        }
        for r in rules
    ]
    tx = {
        "client_ip": ip,
        "unique_id": "u1",
        "request": {"method": "POST", "uri": "/login"},
        "response": {"http_code": status},
        "messages": messages,
    }
    return json.dumps({"transaction": tx})


def test_a_block_names_the_client_the_rules_and_the_score_without_the_evaluation_rule():
    block = parse_audit_line(line())
    assert block is not None
    assert (block.client_ip, block.method, block.uri, block.status) == ("198.51.100.7", "POST", "/login", 403)
    assert block.rule_ids == ("942100",) and block.score == 10


def test_what_is_not_a_refused_transaction_is_skipped():
    assert parse_audit_line(line(status=200)) is None
    assert parse_audit_line("not json") is None
    assert parse_audit_line('{"transaction": 3}') is None
    assert parse_audit_line("[]") is None


def test_the_tail_reads_each_line_once_keeps_a_partial_line_and_restarts_after_truncation(tmp_path: Path):
    log = tmp_path / "audit.log"
    tail = AuditTail(log)
    assert tail.read() == []
    first, second = line("203.0.113.1"), line("203.0.113.2")
    log.write_text(first + "\n" + second[:20])
    assert [b.client_ip for b in tail.read()] == ["203.0.113.1"]
    with open(log, "a") as f:
        f.write(second[20:] + "\n")
    assert [b.client_ip for b in tail.read()] == ["203.0.113.2"]
    assert tail.read() == []
    log.write_text(line("203.0.113.3") + "\n")  # rotated: shorter than what was read
    assert [b.client_ip for b in tail.read()] == ["203.0.113.3"]


def test_a_log_read_past_its_limit_is_emptied(tmp_path: Path):
    log = tmp_path / "audit.log"
    tail = AuditTail(log, max_bytes=100)
    log.write_text((line() + "\n") * 3)
    assert len(tail.read()) == 3
    assert log.stat().st_size == 0
    log.write_text(line("203.0.113.9") + "\n")
    assert [b.client_ip for b in tail.read()] == ["203.0.113.9"]
