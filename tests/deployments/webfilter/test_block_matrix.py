"""The labelled block matrix through the real Squid: zero false negatives, zero false positives, and
every block decided by the labelled rule."""

from __future__ import annotations

import csv

import pytest

from tests.conftest import DATA

pytestmark = pytest.mark.realserver


def matrix() -> list[dict[str, str]]:
    with open(DATA / "webfilter" / "block_matrix.tsv", encoding="utf-8") as fh:
        lines = [line for line in fh if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


async def test_block_matrix_has_no_false_negatives_or_false_positives(wf):
    await wf.api.post("/api/domain-blacklist", json={"domain": "tracker.test"})
    await wf.api.post("/api/ip-blacklist", json={"ip": "127.0.0.2"})
    rows = matrix()
    assert sum(r["expect"] == "block" for r in rows) >= 20 and sum(r["expect"] == "pass" for r in rows) >= 15
    wrong = []
    try:
        for row in rows:
            url = f"http://{row['host']}:{wf.origin.port}{row['path']}"
            r = await wf.proxy.send(wf.proxy.build_request("GET", url))
            decided = "-"
            if r.status_code == 403 and "Blocked by the web filter" in r.text:
                decided = r.text.split("Rule: <b>", 1)[1].split("</b>", 1)[0]
            outcome = "block" if decided != "-" else "pass"
            if outcome != row["expect"] or decided != row["rule"]:
                wrong.append(f"{row['host']}{row['path']}: expected {row['expect']}/{row['rule']}, got {decided}")
    finally:
        await wf.api.delete("/api/domain-blacklist/clear-all")
        await wf.api.delete("/api/ip-blacklist/clear-all")
    assert not wrong, "\n".join(wrong)
