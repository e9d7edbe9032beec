"""Monotonic counters across HAProxy reloads, and the per-source threat book."""

from __future__ import annotations

import time

from actors.mitigation.accounting import Monotonic, ThreatBook


def test_a_counter_grows_by_the_difference_of_readings():
    counter = Monotonic()
    assert counter.update(10) == 10
    assert counter.update(25) == 15
    assert counter.update(25) == 0
    assert counter.total == 25


def test_a_counter_stays_monotonic_when_a_reload_restarts_the_worker_at_zero():
    counter = Monotonic()
    counter.update(100)
    # the new worker starts again from 0 and has counted 7 so far
    assert counter.update(7) == 7
    assert counter.total == 107
    assert counter.update(10) == 3
    assert counter.total == 110


def test_the_book_counts_attacks_per_source_and_per_type():
    book = ThreatBook()
    book.record("10.0.0.1", "http_flood", 3)
    book.record("10.0.0.1", "waf")
    book.record("10.0.0.2", "slowloris")
    assert book.sources["10.0.0.1"].attacks == 4
    assert book.sources["10.0.0.1"].attack_type == "waf"  # the latest kind is the source's type
    assert book.attack_types == {"syn_flood": 0, "http_flood": 3, "slowloris": 1, "waf": 1}
    assert book.top(1) == [{"ip": "10.0.0.1", "attacks": 4}]


def test_a_full_book_forgets_the_source_seen_longest_ago():
    book = ThreatBook(max_sources=2)
    book.record("a", "waf")
    book.record("b", "waf")
    book.record("a", "waf")  # a seen again: b is now the oldest
    book.record("c", "waf")
    assert set(book.sources) == {"a", "c"}


def test_active_threats_are_flagged_sources_and_those_seen_within_the_window():
    book = ThreatBook()
    book.record("recent", "waf")
    old = book.record("old", "waf")
    old.last_seen = time.monotonic() - 120
    flagged = book.record("flagged", "http_flood")
    flagged.last_seen = time.monotonic() - 120
    flagged.flagged_since = time.time()
    assert sorted(book.active(window=60)) == ["flagged", "recent"]
