"""Crediting a blocked host to the domain rule that decided it (tier 1)."""

from __future__ import annotations

from actors.webfilter.rulehits import RuleIndex


def test_the_most_specific_name_wins_then_the_first_matching_pattern():
    index = RuleIndex(
        {
            "domain-blacklist": ["tracker.test", "ads.tracker.test", "/^track[0-9]+\\./"],
            "subscription:3": ["*.wild.test", "tracker.test", "other.test"],
        }
    )
    assert index.decide("cdn.ads.tracker.test") == ("ads.tracker.test", "domain-blacklist")
    assert index.decide("x.tracker.test") == ("tracker.test", "domain-blacklist")  # listed twice: the first source
    assert index.decide("a.wild.test") == ("*.wild.test", "subscription:3")
    assert index.decide("wild.test") is None  # `*.` covers the subdomains only
    assert index.decide("track42.example") == ("/^track[0-9]+\\./", "domain-blacklist")
    assert index.decide("Other.Test") == ("other.test", "subscription:3")
    assert index.decide("removed.test") is None
