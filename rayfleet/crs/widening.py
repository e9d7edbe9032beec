"""CRS 3.3's injection rules widened to where an attack also stands in a request: the path (as sent,
and as libmodsecurity decodes it) and the URL in the Referer. CRS runs them on parameters, cookies and
some headers only; a REST path segment or a link carries the same payloads. Both components apply it:
the mitigation node to every family, the web filter to the families of its enabled categories."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from rayfleet.crs.config import CRS_RULES
from rayfleet.crs.local_rules import RAW_PATH

WIDENED_TARGETS = f"{RAW_PATH}|REQUEST_FILENAME|REQUEST_HEADERS:Referer"
# CRS's injection families: traversal / LFI 930, RCE 932, XSS 941, SQLi 942, Java / Log4j 944. Not RFI (931):
# a Referer is a URL of another site as often as not, and 931130 would refuse every cross-site link.
WIDENED_RANGES: tuple[tuple[int, int], ...] = (
    (930000, 930999),
    (932000, 932999),
    (941000, 941999),
    (942000, 942999),
    (944000, 944999),
)


_RULE = re.compile(r"^Sec(?:Rule|Action)\b(.*?)(?=^Sec|\Z)", re.M | re.S)
_ID = re.compile(r"\bid:(\d+)")
_TAG = re.compile(r"tag:'([^']+)'")


def scoring_rules(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """The (id, tags) of every rule of `text` that adds to the anomaly score (the markers that skip
    paranoia levels, and the chained rules' continuations, have no score of their own)."""
    found = []
    for match in _RULE.finditer(text):
        body = match.group(1)
        rule_id = _ID.search(body)
        if rule_id is not None and "anomaly_score_pl" in body:
            found.append((int(rule_id.group(1)), tuple(_TAG.findall(body))))
    return found


@functools.cache
def crs_rules(folder: Path = CRS_RULES) -> tuple[tuple[int, tuple[str, ...]], ...]:
    return tuple(r for path in sorted(folder.glob("REQUEST-*.conf")) for r in scoring_rules(path.read_text()))


def widened(rule_id: int) -> bool:
    """A CRS rule of the families widened (local rules, ids below 900000, read those places already)."""
    return any(low <= rule_id <= high for low, high in WIDENED_RANGES)


def widen(rule_ids: Iterable[int]) -> list[str]:
    """The directives adding the path and the Referer to those of these rules that are widened."""
    return [f"SecRuleUpdateTargetById {i} {WIDENED_TARGETS}" for i in rule_ids if widened(i)]


def widened_injection_rules(exclusions: Iterable[int] = ()) -> str:
    """Every scoring rule of the widened families but the excluded ones (the mitigation node's extra rules)."""
    skip = set(exclusions)
    return "\n".join(widen(i for i, _ in crs_rules() if i not in skip)) + "\n"
