"""CRS 3.3's injection rules widened to the path, where an attack also stands in a request (a REST path
segment): as sent (libmodsecurity ends its decoded path at an encoded `?`, `local_rules.PATH_RULE`) and
as decoded. CRS runs them on parameters, cookies and some headers only. Both components apply it: the
mitigation node to every family, the web filter to the families of its enabled categories.

Not the Referer: it is a whole URL (`&`, `=`, brackets), and CRS's rules, written for one value, refuse
ordinary ones (932200 on a search engine's `?q=blue+shoes+(size+42)&oq=...`). The local rules read the
Referer with patterns of their own classes."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from rayfleet.crs.config import CRS_RULES
from rayfleet.crs.local_rules import RAW_PATH

WIDENED_TARGETS = f"{RAW_PATH}|REQUEST_FILENAME"
# CRS's injection families: traversal / LFI 930, RCE 932, XSS 941, SQLi 942, Java / Log4j 944. Not RFI (931),
# whose 931130 reads any URL naming another host as remote file inclusion.
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
    """The directives adding the path to those of these rules that are widened."""
    return [f"SecRuleUpdateTargetById {i} {WIDENED_TARGETS}" for i in rule_ids if widened(i)]


def widened_injection_rules(exclusions: Iterable[int] = ()) -> str:
    """Every scoring rule of the widened families but the excluded ones (the mitigation node's extra rules)."""
    skip = set(exclusions)
    return "\n".join(widen(i for i, _ in crs_rules() if i not in skip)) + "\n"
