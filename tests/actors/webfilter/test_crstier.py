"""The CRS tier's refusals as the web filter counts them (actors/webfilter/crstier.py `CrsHits`)."""

from __future__ import annotations

from pathlib import Path

from actors.webfilter import crsrules
from actors.webfilter.crstier import CrsHits
from rayfleet.crs.config import CrsPaths
from tests.rayfleet.crs.test_audit import line

SQL = str(crsrules.BLOCKING_IDS["SQL_INJECTION"])
XSS = str(crsrules.BLOCKING_IDS["XSS"])


def test_counts_restart_from_a_counter_reset_and_the_listed_refusals_follow(tmp_path: Path):
    now = [100.0]
    hits = CrsHits(tmp_path, clock=lambda: now[0])
    log = CrsPaths(tmp_path).audit_log
    with log.open("a") as f:
        f.write(line(rules=("942100", SQL)) + "\n" + line(rules=("941100", XSS)) + "\n")
    before = hits.read()
    assert before["since"] == 100.0 and before["categories"] == {"SQL_INJECTION": 1, "XSS": 1}

    now[0] = 200.0
    with log.open("a") as f:  # logged before the reset, read after it: counted before it
        f.write(line(rules=("942100", SQL)) + "\n")
    hits.reset(150.0)
    now[0] = 300.0
    with log.open("a") as f:
        f.write(line(ip="198.51.100.9", rules=("941100", XSS)) + "\n")
    after = hits.read()
    assert after["since"] == 150.0 and after["categories"] == {"XSS": 1}
    assert after["top_rules"] == [{"rule": "941100", "hits": 1}]
    assert [r["client_ip"] for r in after["recent"]] == ["198.51.100.9"]
