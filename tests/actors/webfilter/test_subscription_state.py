"""Subscription state (tier 1): bounds, what a refresh records, and durability across a killed process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from actors.webfilter.fetch import Fetched
from actors.webfilter.squidconf import Policy
from actors.webfilter.subscriptions import (
    MAX_INTERVAL,
    Outcome,
    SubscriptionError,
    Subscriptions,
    SubscriptionSettings,
    check_copy,
)

ROOT = Path(__file__).resolve().parents[3]
URL = "http://lists.example/ads.txt"


@pytest.fixture
def dsn(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'durable.sqlite3'}"


def good(body: bytes, etag: str = '"v1"') -> Outcome:
    fetched = Fetched(200, body, etag, "")
    return Outcome(fetched, check_copy(fetched, "domain"))


def test_the_interval_is_bounded_by_the_configured_minimum(dsn):
    subs = Subscriptions(SubscriptionSettings(min_interval_seconds=300), dsn)
    for interval in (60, MAX_INTERVAL + 1):
        with pytest.raises(SubscriptionError, match="between 300 and") as refused:
            subs.add(URL, "domain", interval, "")
        assert refused.value.status == 400
    assert subs.add(URL, "domain", 300, "")["interval_seconds"] == 300
    with pytest.raises(SubscriptionError) as twice:
        subs.add(URL, "domain", 3600, "")
    assert twice.value.status == 409


def test_a_failed_or_invalid_refresh_keeps_the_last_good_copy_and_retries_after_the_minimum(dsn):
    subs = Subscriptions(SubscriptionSettings(min_interval_seconds=60), dsn)
    key = str(subs.add(URL, "domain", 3600, "ads")["id"])
    subs.record(key, good(b"||ads.example^\n@@||ok.ads.example^\n"), None, 1000.0)
    assert subs.meta[key]["next_at"] == 1000.0 + 3600
    subs.record(key, Outcome(error="import URL answered 500"), None, 2000.0)
    view = subs.view(key)
    assert (view["entries"], view["exceptions"], view["last_error"]) == (1, 1, "import URL answered 500")
    assert subs.meta[key]["next_at"] == 2000.0 + 60
    subs.record(key, Outcome(Fetched(304, etag='"v1"')), None, 3000.0)
    assert subs.view(key)["last_error"] is None and subs.view(key)["last_status"] == 304
    subs.record(key, good(b"||new.example^\n", '"v2"'), "the proxy refused the new list: ...", 4000.0)
    assert subs.lists[key]["entries"] == ["ads.example"]  # refused by the proxy: not kept
    merged = subs.merged(Policy(domain_blacklist=["own.example"], ip_blacklist=["8.8.8.8"]))
    assert merged.domain_blacklist == ["own.example", "ads.example"]
    assert merged.domain_whitelist == ["ok.ads.example"] and merged.ip_blacklist == ["8.8.8.8"]


@pytest.mark.parametrize(
    "body, reason",
    [
        (b"\x89PNG\x00\x00", "not text"),
        (b"\xff\xfe\xfd", "not UTF-8"),
        (b"", "no valid domain entry (no entry lines)"),
        (b"<html>log in</html>\n", "no valid domain entry (invalid 1)"),
    ],
)
def test_a_body_that_is_no_list_is_refused(body, reason):
    with pytest.raises(SubscriptionError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        check_copy(Fetched(200, body), "domain")


OWNER = """
import sys
from actors.webfilter.entries import parse_list
from actors.webfilter.fetch import Fetched
from actors.webfilter.subscriptions import Outcome, Subscriptions, SubscriptionSettings
subs = Subscriptions(SubscriptionSettings(min_interval_seconds=1), sys.argv[1])
key = str(subs.add("http://lists.example/ads.txt", "domain", 600, "ads")["id"])
fetched = Fetched(200, b"||ads.example^\\n*.wild.example\\n", '"v1"', "Thu, 26 Nov 2026 10:00:00 GMT")
subs.record(key, Outcome(fetched, parse_list(fetched.body.decode(), "domain")), None, 1000.0)
print(key, flush=True)
sys.stdin.read()  # serve until killed
"""


def test_subscriptions_and_their_copies_survive_the_actor_process_being_killed(dsn):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, dsn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert owner.stdout is not None
    key = owner.stdout.readline().strip()
    owner.send_signal(signal.SIGKILL)  # no shutdown: what it recorded must already be stored
    owner.wait()
    restarted = Subscriptions(SubscriptionSettings(min_interval_seconds=1), dsn)
    view = restarted.view(key)
    assert (view["url"], view["entries"], view["etag"], view["last_status"]) == (URL, 2, '"v1"', 200)
    assert view["last_modified"] == "Thu, 26 Nov 2026 10:00:00 GMT"  # the next request is conditional again
    assert restarted.merged(Policy()).domain_blacklist == ["ads.example", "*.wild.example"]


def test_an_id_is_never_given_twice_not_even_after_a_restart(dsn):
    subs = Subscriptions(SubscriptionSettings(min_interval_seconds=1), dsn)
    first = subs.add(URL, "domain", 60, "")["id"]
    assert subs.remove(str(first))
    second = subs.add(URL, "domain", 60, "")["id"]  # a retried DELETE of the first must not hit this one
    assert subs.remove(str(second))
    third = Subscriptions(SubscriptionSettings(min_interval_seconds=1), dsn).add(URL, "domain", 60, "")["id"]
    assert (first, second, third) == (1, 2, 3)
