"""Built-in rule sets, matched by HAProxy after decoding (spec 002 §D WAF; OWASP CRS model)."""

from __future__ import annotations

import pytest

from actors.mitigation.waf_rules import BUILTIN_RULES, CATEGORIES, validate_pattern
from tests.actors.mitigation.waf_eval import evaluate, load_corpus
from tests.polling import eventually


def test_the_corpus_is_big_enough_and_labelled():
    corpus = load_corpus()
    attacks = [c for c in corpus if c["label"] == "attack"]
    benign = [c for c in corpus if c["label"] == "benign"]
    assert len(attacks) >= 200 and len(benign) >= 200
    assert {c["category"] for c in attacks} == set(CATEGORIES)
    assert {"double", "plus", "mixed_case", "html_entity", "header"} <= {c["encoding"] for c in attacks}


def test_every_builtin_pattern_is_a_valid_regex_of_a_known_category():
    for rule in BUILTIN_RULES:
        validate_pattern(rule.pattern)
        assert rule.category in CATEGORIES and 1 <= rule.paranoia <= 4


async def test_paranoia_1_detects_95_percent_with_at_most_1_percent_false_positives(make_fleet):
    fleet = await make_fleet(flood_rps=100000)
    result = await evaluate(fleet.node().address)
    assert result.detection_rate >= 0.95, result.missed
    assert result.false_positive_rate <= 0.01, result.wrongly_blocked


@pytest.mark.parametrize(
    "target",
    [
        "/?q=1%27%20OR%20%271%27%3D%271",  # percent-encoded
        "/?q=1%2527%2520OR%2520%25271%2527%253D%25271",  # encoded twice
        "/?q=1%27+oR+%271%27%3D%271",  # + for spaces, mixed case
        "/?q=%26lt%3Bscript%26gt%3Balert(1)",  # HTML entities
        "/?q=%26%2360%3Bscript%3E",  # numeric entity
    ],
)
async def test_matching_happens_after_decoding(fleet, data_plane, target):
    assert (await data_plane.get(fleet.node_url() + target)).status_code == 403


async def test_headers_are_inspected(fleet, data_plane):
    response = await data_plane.get(
        fleet.node_url() + "/", headers={"User-Agent": "x' UNION SELECT password FROM users--"}
    )
    assert response.status_code == 403


async def test_higher_paranoia_levels_add_broader_rules(make_fleet, data_plane):
    target = "/?q=" + "select%20name%20from%20customers"
    pl1 = await make_fleet(paranoia=1)
    assert (await data_plane.get(pl1.node_url() + target)).status_code == 200
    pl2 = await make_fleet(paranoia=2)
    assert (await data_plane.get(pl2.node_url() + target)).status_code == 403


async def test_a_builtin_hit_is_counted_per_rule(fleet, data_plane):
    await data_plane.get(fleet.node_url() + "/?f=..%2F..%2Fetc%2Fpasswd")

    async def counted() -> bool:
        body = (await fleet.client.get("/nodes/node-1/api/v1/rules")).json()
        return bool(body["builtin_hits"].get("crs-lfi-dotdot"))

    await eventually(counted, what="the built-in rule's hit counted")
    body = (await fleet.client.get("/nodes/node-1/api/v1/rules")).json()
    assert body["builtin_hits"].get("crs-lfi-dotdot") == 1
